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
SEARCH_MASK = ",".join([*(f"places.{field}" for field in _PLACE_FIELDS), "nextPageToken"])
DETAILS_MASK = ",".join([*_PLACE_FIELDS, "reviews"])


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
        answer = await _call(settings, http, "/v1/places:searchText", SEARCH_MASK, body)
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
    answer = await _call(settings, http, path, DETAILS_MASK, None)
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
    )


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
