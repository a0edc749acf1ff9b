"""maps.search through Nominatim (OpenStreetMap's geocoder): GET /search, format=jsonv2.

The public instance's usage policy (https://operations.osmfoundation.org/policies/nominatim/)
asks for an identifying User-Agent (the fetcher sends settings.user_agent), at most one request
per second, and caching of results. The pace is kept in Redis for every process of the
deployment (`_PUBLIC_PACE`; `_PROCESS_PACE` for a caller with no Redis), and so are the answers
(`_SHARED`, behind each process's own copy, `_ANSWERS`). A self-hosted instance is neither paced
nor bound by that policy, but still cached.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

import aiohttp
import redis.asyncio as aioredis

from lookout import errors
from lookout.capabilities.providers import api, cache, limiter, places
from lookout.settings import Settings

NAME = "Nominatim"
PUBLIC_HOST = "nominatim.openstreetmap.org"
MAX_PER_REQUEST = 40  # Nominatim caps `limit` at 40; more come with exclude_place_ids
METRES_PER_DEGREE = 111_320
_OSM_TYPES = {"node": "N", "way": "W", "relation": "R"}

# A search waits at most this long for its turn at the public instance, else rate_limited.
PUBLIC_MAX_WAIT_S = 30.0
_PUBLIC_PACE = limiter.Shared("nominatim-public", 1.0, provider=NAME, max_wait=PUBLIC_MAX_WAIT_S)
_PROCESS_PACE = limiter.Limiter(1.0)
_ANSWERS: cache.TTLCache[list[Any]] = cache.TTLCache(max_entries=1000)
# A full answer (40 places) is ~28 KB of JSON, 1.7 KB compressed for a made-up one of Berlin
# cafés: 10,000 keep Redis' share to tens of MB at most.
_SHARED = cache.Shared("nominatim", max_entries=10_000)


def is_public(settings: Settings) -> bool:
    """Whether the configured instance is held to the public usage policy."""
    return settings.nominatim_public or api.host(settings.nominatim_url) == PUBLIC_HOST


async def search(
    data: dict[str, Any],
    settings: Settings,
    http: aiohttp.ClientSession,
    redis: aioredis.Redis | None = None,
) -> list[dict[str, Any]]:
    """Places for a validated maps.search input, best match first."""
    limit: int = data["limit"]
    found: dict[str, dict[str, Any]] = {}
    seen: list[str] = []
    while len(found) < limit:
        wanted = min(MAX_PER_REQUEST, limit - len(found))
        params = [*query_params(data), ("limit", str(wanted))]
        if seen:
            params.append(("exclude_place_ids", ",".join(seen)))
        items = await _answer(params, settings, http, redis)
        seen += [str(item["place_id"]) for item in items if _has_id(item)]
        for place in filter(None, map(to_place, items)):
            found.setdefault(place["place_ref"], place)
        if len(items) < wanted or not seen:
            break
    return list(found.values())[:limit]


def query_params(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The /search parameters for a maps.search input, limit aside."""
    query: str = data["query"]
    if data.get("near"):
        query = f"{query}, {data['near']}"
    params = [("q", query), ("format", "jsonv2"), ("addressdetails", "1")]
    if "lat" in data:
        box = viewbox(data["lat"], data["lon"], data["radius_m"])
        params += [("viewbox", ",".join(f"{edge:.6f}" for edge in box)), ("bounded", "1")]
    return params


def viewbox(lat: float, lon: float, radius_m: int) -> tuple[float, float, float, float]:
    """The box (left, top, right, bottom) around a circle: Nominatim searches boxes only."""
    dlat = radius_m / METRES_PER_DEGREE
    dlon = radius_m / (METRES_PER_DEGREE * max(math.cos(math.radians(lat)), 0.01))
    return (
        max(-180.0, lon - dlon),
        min(90.0, lat + dlat),
        min(180.0, lon + dlon),
        max(-90.0, lat - dlat),
    )


async def _answer(
    params: list[tuple[str, str]],
    settings: Settings,
    http: aiohttp.ClientSession,
    redis: aioredis.Redis | None,
) -> list[Any]:
    url = f"{settings.nominatim_url.rstrip('/')}/search?{urlencode(params)}"
    ttl = settings.maps_cache_ttl_s
    cached = _ANSWERS.get(url)
    if cached is not None:
        return cached
    shared = await _SHARED.get(redis, url) if redis is not None and ttl > 0 else None
    if shared is not None and isinstance(shared[0], list):
        _ANSWERS.put(url, shared[0], shared[1])  # no longer than another process got it for
        return shared[0]
    if is_public(settings) and redis is not None:
        await _PUBLIC_PACE.wait(redis)
    elif is_public(settings):
        await _PROCESS_PACE.wait()
    payload = await api.call(
        NAME, url, base_url=settings.nominatim_url, settings=settings, http=http
    )
    if not isinstance(payload, list):
        raise errors.UpstreamError(
            f"{NAME} answered JSON that is not a list of places.", provider=NAME
        )
    _ANSWERS.put(url, payload, ttl)
    if redis is not None:
        await _SHARED.put(redis, url, payload, ttl)
    return payload


def _has_id(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("place_id"), int)


def to_place(item: Any) -> dict[str, Any] | None:
    """A jsonv2 result as a place; None for one too broken to use."""
    if not isinstance(item, dict):
        return None
    kind, osm_id = _OSM_TYPES.get(str(item.get("osm_type"))), item.get("osm_id")
    lat, lon = places.number(item.get("lat")), places.number(item.get("lon"))
    if kind is None or not isinstance(osm_id, int) or lat is None or lon is None:
        return None
    name = item.get("name") or _own_name(item)
    return places.place(
        provider="nominatim",
        ref=f"{kind}{osm_id}",
        lat=lat,
        lon=lon,
        name=name,
        address=_address(item.get("display_name"), name),
        category=_category(item),
        url=f"https://www.openstreetmap.org/{item['osm_type']}/{osm_id}",
    )


def _own_name(item: dict[str, Any]) -> Any:
    # addressdetails lists the feature itself first, under its type ("cafe": "Blue Door").
    address = item.get("address")
    return address.get(item.get("type")) if isinstance(address, dict) else None


def _address(display_name: Any, name: Any) -> Any:
    """display_name without the leading name, which the place already carries."""
    if isinstance(display_name, str) and isinstance(name, str):
        return display_name.removeprefix(f"{name}, ")
    return display_name


def _category(item: dict[str, Any]) -> Any:
    kind = item.get("type")
    # OSM tags say building=yes for a building of no particular use.
    return item.get("category") if kind in (None, "yes") else str(kind).replace("_", " ")
