"""maps.search and maps.reviews through Google's Places API (New).

Text Search: POST /v1/places:searchText; Place Details: GET /v1/places/{id}. Both need the key in
X-Goog-Api-Key and a field mask in X-Goog-FieldMask (Google bills by the fields asked for). Answers
are not cached: Google's terms allow keeping place ids, not place content.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import aiohttp

from lookout import errors
from lookout.capabilities.providers import api, places
from lookout.settings import Settings

NAME = "Google Places"
MAX_PER_PAGE = 20  # Text Search's maxResultCount; more come page by page with pageToken
MAX_PAGES = 3  # Text Search stops at 60 results
_PLACE_FIELDS = (
    "id",
    "displayName",
    "formattedAddress",
    "location",
    "primaryType",
    "primaryTypeDisplayName",
    "rating",
    "userRatingCount",
    "googleMapsUri",
)
# With LOOKOUT_MAPS_HOURS_AND_PRICES: Google bills a request by its field mask's highest tier;
# these two are Enterprise fields, as rating and userRatingCount (asked always) already are.
_HOURS_AND_PRICES = ("regularOpeningHours", "priceLevel")
SEARCH_MASK = ",".join([*(f"places.{field}" for field in _PLACE_FIELDS), "nextPageToken"])
DETAILS_MASK = ",".join([*_PLACE_FIELDS, "reviews"])
_EXTRA_SEARCH = "".join(f",places.{field}" for field in _HOURS_AND_PRICES)
_EXTRA_DETAILS = "".join(f",{field}" for field in _HOURS_AND_PRICES)
_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")  # Google's day 0 is Sunday
_PRICE_LEVELS = {
    "PRICE_LEVEL_FREE": "free",
    "PRICE_LEVEL_INEXPENSIVE": "inexpensive",
    "PRICE_LEVEL_MODERATE": "moderate",
    "PRICE_LEVEL_EXPENSIVE": "expensive",
    "PRICE_LEVEL_VERY_EXPENSIVE": "very expensive",
}


def search_mask(settings: Settings) -> str:
    return SEARCH_MASK + (_EXTRA_SEARCH if settings.maps_hours_and_prices else "")


def details_mask(settings: Settings) -> str:
    return DETAILS_MASK + (_EXTRA_DETAILS if settings.maps_hours_and_prices else "")


def configured(settings: Settings) -> bool:
    return bool(settings.google_places_key)


async def search(
    data: dict[str, Any], settings: Settings, http: aiohttp.ClientSession
) -> list[dict[str, Any]]:
    """Places for a validated maps.search input, in Google's order."""
    limit: int = data["limit"]
    body = search_body(data)
    found: dict[str, dict[str, Any]] = {}
    for _ in range(MAX_PAGES):
        answer = await _call(settings, http, "/v1/places:searchText", search_mask(settings), body)
        items = answer.get("places")
        for place in filter(None, map(to_place, items if isinstance(items, list) else [])):
            found.setdefault(place["place_ref"], place)
        token = answer.get("nextPageToken")
        if len(found) >= limit or not isinstance(token, str) or not token:
            break
        # Google wants every other field of the request unchanged when paging.
        body = {**body, "pageToken": token}
    return list(found.values())[:limit]


def search_body(data: dict[str, Any]) -> dict[str, Any]:
    """The Text Search request for a maps.search input."""
    text: str = data["query"]
    if data.get("near"):
        text = f"{text} in {data['near']}"
    body: dict[str, Any] = {"textQuery": text, "maxResultCount": min(MAX_PER_PAGE, data["limit"])}
    if "lat" in data:
        centre = {"latitude": data["lat"], "longitude": data["lon"]}
        body["locationBias"] = {"circle": {"center": centre, "radius": float(data["radius_m"])}}
    return body


async def details(
    place_id: str, limit: int, settings: Settings, http: aiohttp.ClientSession
) -> dict[str, Any]:
    """{"place", "reviews"} for a Google place id (Google returns at most 5 reviews)."""
    path = f"/v1/places/{quote(place_id, safe='')}"
    answer = await _call(settings, http, path, details_mask(settings), None)
    place = to_place(answer)
    if place is None:
        raise errors.UpstreamError(
            f"{NAME} answered a place without an id or location.", provider=NAME
        )
    items = answer.get("reviews")
    reviews = [to_review(item) for item in (items if isinstance(items, list) else [])]
    return {"place": place, "reviews": [review for review in reviews if review][:limit]}


async def _call(
    settings: Settings,
    http: aiohttp.ClientSession,
    path: str,
    mask: str,
    body: dict[str, Any] | None,
) -> dict[str, Any]:
    headers = {"X-Goog-Api-Key": settings.google_places_key, "X-Goog-FieldMask": mask}
    answer = await api.call(
        NAME,
        settings.google_places_url.rstrip("/") + path,
        base_url=settings.google_places_url,
        settings=settings,
        http=http,
        method="GET" if body is None else "POST",
        body=body,
        headers=headers,
        not_found="Google Places has no place with that place_ref; search again for a fresh one.",
        hints={403: " Check LOOKOUT_GOOGLE_PLACES_KEY and that the Places API (New) is enabled."},
    )
    if not isinstance(answer, dict):
        raise errors.UpstreamError(f"{NAME} answered JSON that is not an object.", provider=NAME)
    return answer


def to_place(item: Any) -> dict[str, Any] | None:
    """A Places (New) Place as a place; None without an id or a location."""
    if not isinstance(item, dict) or not places.is_ref(item.get("id")):
        return None
    location = places.field(item, "location")
    lat, lon = places.number(location.get("latitude")), places.number(location.get("longitude"))
    if lat is None or lon is None:
        return None
    return places.place(
        provider="google",
        ref=item["id"],
        lat=lat,
        lon=lon,
        name=_localized(item.get("displayName")),
        address=item.get("formattedAddress"),
        category=_localized(item.get("primaryTypeDisplayName")) or item.get("primaryType"),
        rating=item.get("rating"),
        reviews_count=item.get("userRatingCount"),
        url=item.get("googleMapsUri"),
        opening_hours=opening_hours(item.get("regularOpeningHours")),
        price_level=_price_level(item.get("priceLevel")),
    )


def opening_hours(value: Any) -> str | None:
    """Places (New) OpeningHours.periods in words, a day at a time from Monday:
    "Mon 09:00-18:00, Tue 09:00-12:00 14:00-18:00, Sun closed"; None without a valid one."""
    periods = value.get("periods") if isinstance(value, dict) else None
    if not isinstance(periods, list) or not periods:
        return None
    spans: dict[int, list[str]] = {day: [] for day in range(7)}
    for period in periods:
        start, end = places.field(period, "open"), places.field(period, "close")
        day = start.get("day")
        if not isinstance(day, int) or not 0 <= day < 7:
            continue
        if not end:  # an open without a close: open 24 hours, every day (Google's convention)
            return "open 24 hours"
        spans[day].append(f"{_clock(start)}\u2013{_clock(end)}")
    if not any(spans.values()):
        return None  # no period Google documents
    order = [*range(1, 7), 0]
    return ", ".join(f"{_DAYS[day]} {' '.join(spans[day]) or 'closed'}" for day in order)


def _price_level(value: Any) -> str | None:
    return _PRICE_LEVELS.get(value) if isinstance(value, str) else None  # upstream: untrusted


def _clock(point: dict[str, Any]) -> str:
    hour, minute = point.get("hour", 0), point.get("minute", 0)
    if not isinstance(hour, int) or not isinstance(minute, int):
        return "?"
    return f"{hour % 25:02d}:{minute % 60:02d}"


def to_review(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    text = places.field(item, "text")
    return places.review(
        author=places.field(item, "authorAttribution").get("displayName"),
        rating=item.get("rating"),
        text_=text.get("text"),
        published_at=item.get("publishTime"),
        language=text.get("languageCode"),
    )


def _localized(value: Any) -> Any:
    # Places (New) wraps display strings as LocalizedText: {"text": "...", "languageCode": "en"}.
    return value.get("text") if isinstance(value, dict) else None
