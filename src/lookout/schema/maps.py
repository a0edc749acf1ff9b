"""Input and output schemas of the maps verbs; bounded like every verb schema (see verbs.py)."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from lookout.schema import verbs

MAX_PLACES = 50
MAX_REVIEWS = 50
DEFAULT_RADIUS_M = 5000
MAX_RADIUS_M = 50_000  # Google's locationBias circle allows no more
PROVIDERS = ("nominatim", "google")
# Lengths the providers' values are clipped to, so a long upstream string never breaks a result.
MAX_REF = 320
MAX_NAME = 500
MAX_ADDRESS = 1000
MAX_CATEGORY = 100
MAX_AUTHOR = 200
MAX_REVIEW_TEXT = 10_000
MAX_HOURS = 500
MAX_PRICE_LEVEL = 40
REF_ID = r"[A-Za-z0-9_-]{1,300}"  # a provider's own id inside a place_ref
PLACE_REF = rf"^({'|'.join(PROVIDERS)}):{REF_ID}$"


def _limit(maximum: int, default: int, what: str) -> fields.Integer:
    return fields.Integer(
        load_default=default,
        validate=validate.Range(min=1, max=maximum),
        metadata={"description": f"At most this many {what} (1 to {maximum}, default {default})."},
    )


class MapsSearchInputSchema(verbs.StrictSchema):
    query = fields.String(
        required=True,
        validate=validate.Length(min=1, max=300),
        metadata={"description": "What to look for: a name, a kind of place, or an address."},
    )
    near = verbs.bounded_str(200, "Where, in words (a city, a district, an address).")
    lat = fields.Float(
        validate=validate.Range(min=-90, max=90),
        metadata={"description": "Latitude of the centre to search around (with lon)."},
    )
    lon = fields.Float(
        validate=validate.Range(min=-180, max=180),
        metadata={"description": "Longitude of the centre to search around (with lat)."},
    )
    radius_m = fields.Integer(
        validate=validate.Range(min=1, max=MAX_RADIUS_M),
        metadata={
            "description": f"Search radius around lat/lon in metres (default {DEFAULT_RADIUS_M})."
        },
    )
    limit = _limit(MAX_PLACES, 10, "places")

    @validates_schema
    def _one_way_to_say_where(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("lat" in data) != ("lon" in data):
            raise ValidationError("Send lat and lon together.", "lat" if "lon" in data else "lon")
        if "near" in data and "lat" in data:
            raise ValidationError("Send either near (words) or lat/lon, not both.", "near")
        if "radius_m" in data and "lat" not in data:
            raise ValidationError("radius_m needs lat and lon.", "radius_m")

    @post_load
    def _default_radius(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if "lat" in data:
            data.setdefault("radius_m", DEFAULT_RADIUS_M)
        return data


class PlaceSchema(verbs.StrictSchema):
    place_ref = verbs.bounded_str(
        MAX_REF, "Opaque reference to this place; maps.reviews accepts it.", required=True
    )
    name = verbs.bounded_str(MAX_NAME, "The place's name.", allow_none=True)
    address = verbs.bounded_str(MAX_ADDRESS, "Its address, formatted.", allow_none=True)
    lat = fields.Float(required=True, metadata={"description": "Latitude."})
    lon = fields.Float(required=True, metadata={"description": "Longitude."})
    category = verbs.bounded_str(
        MAX_CATEGORY, "What kind of place (cafe, museum…).", allow_none=True
    )
    rating = fields.Float(
        allow_none=True,
        metadata={"description": "Average rating, 1 to 5, when the provider has it."},
    )
    reviews_count = fields.Integer(
        allow_none=True, metadata={"description": "How many ratings the average is over."}
    )
    url = verbs.bounded_str(verbs.MAX_URL, "The place on the provider's map.", allow_none=True)
    opening_hours = verbs.bounded_str(
        MAX_HOURS,
        'Its regular opening hours, a day at a time ("Mon 09:00-18:00, …, Sun closed"), when '
        "the operator asks the provider for them (LOOKOUT_MAPS_HOURS_AND_PRICES) and it has them.",
        allow_none=True,
    )
    price_level = verbs.bounded_str(
        MAX_PRICE_LEVEL,
        "How expensive (free, inexpensive, moderate, expensive, very expensive), on the same "
        "terms as opening_hours.",
        allow_none=True,
    )
    provider = fields.String(
        required=True,
        validate=validate.OneOf(PROVIDERS),
        metadata={"description": "Which provider found it."},
    )


class MapsSearchOutputSchema(verbs.StrictSchema):
    places = fields.List(
        fields.Nested(PlaceSchema), validate=validate.Length(max=MAX_PLACES), required=True
    )


class MapsReviewsInputSchema(verbs.StrictSchema):
    place_ref = fields.String(
        required=True,
        validate=[
            validate.Length(max=MAX_REF),
            validate.Regexp(
                PLACE_REF, error="Not a place_ref; take one from a maps.search result."
            ),
        ],
        metadata={"description": "A place_ref from maps.search."},
    )
    limit = _limit(MAX_REVIEWS, 10, "reviews")


class ReviewSchema(verbs.StrictSchema):
    author = verbs.bounded_str(MAX_AUTHOR, "Who wrote it (their display name).", allow_none=True)
    rating = fields.Float(allow_none=True, metadata={"description": "Their rating, 1 to 5."})
    text = verbs.bounded_str(MAX_REVIEW_TEXT, "What they wrote.", allow_none=True)
    published_at = fields.AwareDateTime(
        allow_none=True, metadata={"description": "When it was published."}
    )
    language = verbs.bounded_str(20, "Language of the text (BCP-47 code).", allow_none=True)


class MapsReviewsOutputSchema(verbs.StrictSchema):
    place = fields.Nested(PlaceSchema, required=True)
    reviews = fields.List(
        fields.Nested(ReviewSchema), validate=validate.Length(max=MAX_REVIEWS), required=True
    )
