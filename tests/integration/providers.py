"""Fake provider servers: the parts of Nominatim, Google Places (New) and SearXNG we use.

Each answers in the shape its public documentation shows (the records below are written from
the documented examples), checks what the real service checks (format, API key, field mask),
records every request, and can be told to fail the way real services do.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout.capabilities import fetch, registry
from lookout.settings import Settings
from tests.integration import webpages

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ServerFactory = Callable[..., Awaitable[TestServer]]

LICENCE = "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright"
GOOGLE_KEY = "test-places-key"


def nominatim_record(
    place_id: int,
    osm: tuple[str, int],
    name: str,
    lat: str,
    lon: str,
    kind: tuple[str, str] = ("amenity", "cafe"),
    road: str = "Oranienstraße",
) -> dict[str, Any]:
    """One jsonv2 result with addressdetails, as https://nominatim.org/release-docs/latest/api/Output/
    documents it (coordinates are strings; the feature is first in `address`, under its type)."""
    category, kind_name = kind
    return {
        "place_id": place_id,
        "licence": LICENCE,
        "osm_type": osm[0],
        "osm_id": osm[1],
        "lat": lat,
        "lon": lon,
        "category": category,
        "type": kind_name,
        "place_rank": 30,
        "importance": 0.00001,
        "addresstype": category,
        "name": name,
        "display_name": f"{name}, 12, {road}, Kreuzberg, Berlin, 10999, Deutschland",
        "address": {
            kind_name: name,
            "house_number": "12",
            "road": road,
            "suburb": "Kreuzberg",
            "city": "Berlin",
            "postcode": "10999",
            "country": "Deutschland",
            "country_code": "de",
        },
        "boundingbox": [lat, lat, lon, lon],
    }


BERLIN_CAFES = [
    nominatim_record(301, ("node", 2_466_789_001), "Café Blume", "52.5010", "13.4180"),
    nominatim_record(302, ("way", 48_112_233), "Kaffeehaus Oranien", "52.5020", "13.4200"),
    nominatim_record(
        303, ("relation", 9_001), "Kaffeerösterei", "52.6000", "13.6000", ("building", "yes")
    ),
]


def google_place(index: int, *, lat: float = -33.8651, lon: float = 151.2113) -> dict[str, Any]:
    """A Place as https://developers.google.com/maps/documentation/places/web-service/
    reference/rest/v1/places documents it, with the fields we ask for and some we do not."""
    place_id = f"ChIJs5ydyTiuEmsR0fRSlU0C7k{index:03d}"
    return {
        "name": f"places/{place_id}",
        "id": place_id,
        "displayName": {"text": f"Spice Temple {index}", "languageCode": "en"},
        "formattedAddress": f"{index} Bligh St, Sydney NSW 2000, Australia",
        "location": {"latitude": lat, "longitude": lon},
        "rating": 4.4,
        "userRatingCount": 1200 + index,
        "googleMapsUri": f"https://maps.google.com/?cid={1_000_000 + index}",
        "primaryType": "chinese_restaurant",
        "primaryTypeDisplayName": {"text": "Chinese Restaurant", "languageCode": "en-US"},
        "internationalPhoneNumber": "+61 2 8078 1888",
        "regularOpeningHours": opening_hours({day: ((9, 0), (18, 0)) for day in range(1, 6)}),
        "priceLevel": "PRICE_LEVEL_MODERATE",
        "reviews": [_google_review(place_id, n) for n in range(6)],
    }


def opening_hours(days: dict[int, tuple[tuple[int, int], tuple[int, int]]]) -> dict[str, Any]:
    """An OpeningHours as Places (New) documents it: periods of open/close points (day 0 is
    Sunday), openNow and weekdayDescriptions (which we do not read)."""
    periods = [
        {"open": {"day": day, "hour": start[0], "minute": start[1]},
         "close": {"day": day, "hour": end[0], "minute": end[1]}}
        for day, (start, end) in sorted(days.items())
    ]  # fmt: skip
    return {
        "openNow": True,
        "periods": periods,
        "weekdayDescriptions": ["Monday: 9:00 AM \u2013 6:00 PM"],
    }


def _google_review(place_id: str, n: int) -> dict[str, Any]:
    text = f"Review {n}: the dumplings were excellent.\nWould come back."
    return {
        "name": f"places/{place_id}/reviews/ChZDSUhNMG9nS0VJQ0FnSUR{n}",
        "relativePublishTimeDescription": "a month ago",
        "rating": 5 - n % 3,
        "text": {"text": text, "languageCode": "en"},
        "originalText": {"text": text, "languageCode": "en"},
        "authorAttribution": {
            "displayName": f"Reviewer {n}",
            "uri": f"https://www.google.com/maps/contrib/10{n}/reviews",
            "photoUri": f"https://lh3.googleusercontent.com/a/{n}",
        },
        "publishTime": f"2024-03-1{n}T02:31:43.416935123Z",
    }


def searxng_result(index: int) -> dict[str, Any]:
    """One entry of SearXNG's format=json `results`."""
    return {
        "url": f"https://news.example/flood-{index}",
        "title": f"Flood warning {index}",
        "content": f"River levels rising, report {index}.",
        "engine": "duckduckgo",
        "engines": ["duckduckgo", "brave"],
        "score": 1.0 / (index + 1),
        "category": "general",
        "parsed_url": ["https", "news.example", f"/flood-{index}", "", "", ""],
        "positions": [index + 1],
    }


@dataclasses.dataclass
class Fake:
    """What every fake shares: a request log, and a failure to answer instead when set."""

    requests: list[web.Request] = dataclasses.field(default_factory=list)
    bodies: list[Any] = dataclasses.field(default_factory=list)
    failure: Handler | None = None
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}"

    def app(self) -> web.Application:
        raise NotImplementedError

    async def _admit(self, request: web.Request) -> web.StreamResponse | None:
        self.requests.append(request)
        self.bodies.append(await request.json() if request.body_exists else None)
        return await self.failure(request) if self.failure else None

    def fail_with(
        self,
        status: int,
        body: str = "",
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        async def answer(request: web.Request) -> web.Response:
            return web.Response(
                status=status, text=body, content_type=content_type, headers=headers
            )

        self.failure = answer


def _google_error(status: int, code: str, message: str) -> web.Response:
    body = {"error": {"code": status, "message": message, "status": code}}
    return web.json_response(body, status=status)


@dataclasses.dataclass
class FakeNominatim(Fake):
    """GET /search with format=jsonv2: `limit` (capped at 40), `exclude_place_ids`, and
    `viewbox` + `bounded=1` filtering; every other word of the query matches everything."""

    records: list[dict[str, Any]] = dataclasses.field(default_factory=lambda: list(BERLIN_CAFES))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/search", self.search)
        return app

    async def search(self, request: web.Request) -> web.StreamResponse:
        failed = await self._admit(request)
        if failed is not None:
            return failed
        query = request.query
        if query.get("format") != "jsonv2" or not query.get("q"):
            return web.json_response(
                {"error": {"code": 400, "message": "Parameter 'q' or 'format' missing."}},
                status=400,
            )
        excluded = set(query.get("exclude_place_ids", "").split(","))
        found = [r for r in self.records if str(r["place_id"]) not in excluded]
        if query.get("bounded") == "1" and "viewbox" in query:
            found = [r for r in found if _inside(r, query["viewbox"])]
        limit = min(40, int(query.get("limit", "10")))
        return web.json_response(copy.deepcopy(found[:limit]))


def _inside(record: dict[str, Any], viewbox: str) -> bool:
    left, top, right, bottom = map(float, viewbox.split(","))
    lat, lon = float(record["lat"]), float(record["lon"])
    return bottom <= lat <= top and left <= lon <= right


@dataclasses.dataclass
class FakePlaces(Fake):
    """Places API (New): POST /v1/places:searchText (pages of maxResultCount, pageToken) and
    GET /v1/places/{id}; the key and a field mask are required, and only masked fields return."""

    places: list[dict[str, Any]] = dataclasses.field(
        default_factory=lambda: [google_place(index) for index in range(3)]
    )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/places:searchText", self.search_text)
        app.router.add_get("/v1/places/{place_id}", self.details)
        return app

    async def search_text(self, request: web.Request) -> web.StreamResponse:
        refused = await self._admit(request) or _refused(request)
        if refused is not None:
            return refused
        body = self.bodies[-1]
        if not isinstance(body, dict) or not body.get("textQuery"):
            return _google_error(400, "INVALID_ARGUMENT", "Empty text_query.")
        size = min(20, int(body.get("maxResultCount", 20)))
        start = int(body.get("pageToken") or 0)
        page = self.places[start : start + size]
        mask = _mask(request, "places.")
        answer: dict[str, Any] = {"places": [_masked(place, mask) for place in page]}
        if start + size < len(self.places) and "nextPageToken" in mask:
            answer["nextPageToken"] = str(start + size)
        return web.json_response(answer)

    async def details(self, request: web.Request) -> web.StreamResponse:
        refused = await self._admit(request) or _refused(request)
        if refused is not None:
            return refused
        wanted = request.match_info["place_id"]
        for place in self.places:
            if place["id"] == wanted:
                return web.json_response(_masked(place, _mask(request, "")))
        return _google_error(404, "NOT_FOUND", f"Place '{wanted}' not found.")


def _refused(request: web.Request) -> web.Response | None:
    if request.headers.get("X-Goog-Api-Key") != GOOGLE_KEY:
        return _google_error(
            403, "PERMISSION_DENIED", "API key not valid. Please pass a valid API key."
        )
    if not request.headers.get("X-Goog-FieldMask"):
        return _google_error(400, "INVALID_ARGUMENT", "FieldMask is a required parameter.")
    return None


def _mask(request: web.Request, prefix: str) -> set[str]:
    fields = request.headers["X-Goog-FieldMask"].split(",")
    return {field.removeprefix(prefix) for field in fields}


def _masked(place: dict[str, Any], mask: set[str]) -> dict[str, Any]:
    return {key: copy.deepcopy(value) for key, value in place.items() if key in mask}


@dataclasses.dataclass
class FakeSearxng(Fake):
    """GET /search?q=…&format=json&pageno=N, 10 results a page; 403 unless format=json, as a
    SearXNG without the json format enabled answers."""

    results: list[dict[str, Any]] = dataclasses.field(
        default_factory=lambda: [searxng_result(index) for index in range(25)]
    )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/search", self.search)
        return app

    async def search(self, request: web.Request) -> web.StreamResponse:
        failed = await self._admit(request)
        if failed is not None:
            return failed
        if request.query.get("format") != "json":
            return web.Response(status=403, text="Forbidden", content_type="text/html")
        page = int(request.query.get("pageno", "1"))
        results = self.results[(page - 1) * 10 : page * 10]
        body = {
            "query": request.query["q"],
            "number_of_results": 0,
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }
        return web.Response(text=json.dumps(body), content_type="application/json")


async def serve(fake: Fake, aiohttp_server: ServerFactory) -> None:
    """Start `fake` on a loopback port."""
    fake.server = await aiohttp_server(fake.app())


def settings(**overrides: Any) -> Settings:
    """Settings with private networks off (providers must still be reachable: they are trusted)
    and the maps cache off unless a test turns it on."""
    overrides.setdefault("maps_cache_ttl_s", 0)
    overrides.setdefault("fetch_timeout_s", 2.0)
    return webpages.make_settings(allow_private=False, **overrides)


async def queue_public_nominatim(redis: aioredis.Redis, seconds: float) -> None:
    """What other processes' searches leave in Redis: the public Nominatim instance's next free
    slot `seconds` from now (limiter.Shared's key, on Redis' clock)."""
    now_s, now_us = await redis.time()
    next_free_ms = now_s * 1000 + now_us // 1000 + round(seconds * 1000)
    await redis.set("lookout:pace:nominatim-public", next_free_ms)


async def run(
    name: str, raw: dict[str, Any], settings: Settings, redis: aioredis.Redis | None = None
) -> dict[str, Any]:
    """Call verb `name` as a door would, with a guarded session like the web process's (and
    the doors' Redis client, when given)."""
    verb = registry.get(name)
    data = registry.validate_input(verb, raw)
    async with fetch.open_session(settings) as http:
        ctx, _ = webpages.context(settings, http)
        output = await verb.execute(data, dataclasses.replace(ctx, redis=redis))
    return registry.dump_output(verb, output)
