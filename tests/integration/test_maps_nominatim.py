"""maps.search through Nominatim: the jsonv2 protocol, limits, failures, pace and cache."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis
from aiohttp import web

from lookout import errors
from lookout.capabilities.providers import cache, nominatim
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.providers import FakeNominatim, ServerFactory
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("loopback_only")


@pytest.fixture
async def osm(aiohttp_server: ServerFactory) -> FakeNominatim:
    fake = FakeNominatim()
    await providers.serve(fake, aiohttp_server)
    return fake


def _settings(osm: FakeNominatim, **overrides: Any) -> Settings:
    return providers.settings(nominatim_url=osm.url, **overrides)


async def _search(osm: FakeNominatim, raw: dict[str, Any], **overrides: Any) -> list[Any]:
    output = await providers.run("maps.search", raw, _settings(osm, **overrides))
    places: list[Any] = output["places"]
    return places


async def test_places_come_back_mapped_from_jsonv2(osm: FakeNominatim) -> None:
    places = await _search(osm, {"query": "cafe", "near": "Kreuzberg, Berlin"})

    assert places[0] == {
        "place_ref": "nominatim:N2466789001",
        "name": "Café Blume",
        "address": "12, Oranienstraße, Kreuzberg, Berlin, 10999, Deutschland",
        "lat": 52.501,
        "lon": 13.418,
        "category": "cafe",
        "rating": None,
        "reviews_count": None,
        "url": "https://www.openstreetmap.org/node/2466789001",
        "provider": "nominatim",
    }
    assert [place["place_ref"] for place in places[1:]] == [
        "nominatim:W48112233",
        "nominatim:R9001",
    ]
    assert places[2]["category"] == "building"  # building=yes says only that it is a building
    sent = osm.requests[0]
    assert dict(sent.query) == {
        "q": "cafe, Kreuzberg, Berlin",
        "format": "jsonv2",
        "addressdetails": "1",
        "limit": "10",
    }
    assert sent.headers["User-Agent"] == providers.settings().user_agent


async def test_a_name_missing_from_the_record_is_read_from_its_address(
    osm: FakeNominatim,
) -> None:
    del osm.records[0]["name"]
    places = await _search(osm, {"query": "cafe"})
    assert places[0]["name"] == "Café Blume"


async def test_lat_lon_and_radius_bound_the_search_to_a_box(osm: FakeNominatim) -> None:
    places = await _search(osm, {"query": "cafe", "lat": 52.5015, "lon": 13.419, "radius_m": 2000})

    assert [place["name"] for place in places] == ["Café Blume", "Kaffeehaus Oranien"]
    sent = osm.requests[0].query
    assert sent["bounded"] == "1"
    left, top, right, bottom = map(float, sent["viewbox"].split(","))
    assert left < 13.419 < right and bottom < 52.5015 < top
    assert top - bottom == pytest.approx(2 * 2000 / 111_320, rel=0.01)


async def test_limit_is_passed_on_and_obeyed(osm: FakeNominatim) -> None:
    places = await _search(osm, {"query": "cafe", "limit": 2})
    assert len(places) == 2
    assert osm.requests[0].query["limit"] == "2"


async def test_more_than_nominatims_40_come_from_a_second_page(osm: FakeNominatim) -> None:
    osm.records = [
        providers.nominatim_record(1000 + n, ("node", 5000 + n), f"Café {n}", "52.5", "13.4")
        for n in range(60)
    ]

    places = await _search(osm, {"query": "cafe", "limit": 45})

    assert [place["name"] for place in places] == [f"Café {n}" for n in range(45)]
    first, second = (request.query for request in osm.requests)
    assert first["limit"] == "40" and "exclude_place_ids" not in first
    assert second["limit"] == "5"
    assert second["exclude_place_ids"].split(",") == [str(1000 + n) for n in range(40)]


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        (503, "<html><h1>503 Service Unavailable</h1></html>", "text/html"),
        (500, '{"error": {"code": 500, "message": "Internal error"}}', "application/json"),
        (200, "<html>maintenance</html>", "text/html"),
        (200, "[{not json", "application/json"),
        (200, '{"error": "not a list"}', "application/json"),
    ],
)
async def test_provider_failures_are_upstream_errors(
    osm: FakeNominatim, status: int, body: str, content_type: str
) -> None:
    osm.fail_with(status, body, content_type=content_type)
    with pytest.raises(errors.UpstreamError, match="Nominatim") as caught:
        await _search(osm, {"query": "cafe"})
    assert caught.value.status == 502 and "<html" not in caught.value.message


async def test_their_429_is_rate_limited_with_their_retry_after(osm: FakeNominatim) -> None:
    osm.fail_with(429, "Too many requests", content_type="text/plain", headers={"Retry-After": "7"})
    with pytest.raises(errors.RateLimited) as caught:
        await _search(osm, {"query": "cafe"})
    assert caught.value.retry_after == 7 and caught.value.status == 429


async def test_a_provider_that_does_not_answer_in_time_is_an_upstream_error(
    osm: FakeNominatim,
) -> None:
    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response([])

    osm.failure = hang
    with pytest.raises(errors.UpstreamError, match="Timed out"):
        await _search(osm, {"query": "cafe"}, fetch_timeout_s=0.5)


async def test_an_unreachable_provider_is_an_upstream_error(osm: FakeNominatim) -> None:
    settings = _settings(osm)
    assert osm.server is not None
    await osm.server.close()
    with pytest.raises(errors.UpstreamError, match="Could not connect"):
        await providers.run("maps.search", {"query": "cafe"}, settings)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])  # another host; another port
async def test_a_redirect_off_the_provider_host_and_port_is_refused_unsent(
    osm: FakeNominatim, aiohttp_server: ServerFactory, host: str
) -> None:
    elsewhere = FakeNominatim()
    await providers.serve(elsewhere, aiohttp_server)
    assert elsewhere.server is not None
    target = f"http://{host}:{elsewhere.server.port}/search?q=x&format=jsonv2"
    osm.fail_with(302, headers={"Location": target})

    with pytest.raises(errors.UpstreamError, match="not a configured provider host and port"):
        await _search(osm, {"query": "cafe"})
    assert elsewhere.requests == []


async def test_the_public_instance_gets_at_most_one_request_a_second(osm: FakeNominatim) -> None:
    calls = 3
    started = time.monotonic()

    await asyncio.gather(
        *(_search(osm, {"query": f"cafe {n}"}, nominatim_public=True) for n in range(calls))
    )

    assert time.monotonic() - started >= calls - 1
    assert sorted(request.query["q"] for request in osm.requests) == ["cafe 0", "cafe 1", "cafe 2"]


async def test_the_public_pace_is_shared_through_redis(osm: FakeNominatim, redis_url: str) -> None:
    # Given another process's search took the public instance's slot now (the next is in 1 s)
    redis = aioredis.Redis.from_url(redis_url)
    started = time.monotonic()  # before the slot: Redis may reply late (a loaded machine)
    await providers.queue_public_nominatim(redis, 1)

    # When this process searches with the doors' Redis client
    output = await providers.run(
        "maps.search", {"query": "cafe"}, _settings(osm, nominatim_public=True), redis
    )
    await redis.aclose()

    # Then it waited for the next slot
    assert time.monotonic() - started >= 0.9
    assert len(output["places"]) == 3


async def test_the_same_search_within_the_ttl_is_answered_from_the_cache(
    osm: FakeNominatim,
) -> None:
    query = f"cafe {uuid.uuid4().hex}"  # the cache outlives a test; nobody else asked this
    first = await _search(osm, {"query": query}, maps_cache_ttl_s=86400)
    osm.records.clear()  # the provider's answer changes; the cached one is still served

    again = await _search(osm, {"query": query}, maps_cache_ttl_s=86400)
    other = await _search(osm, {"query": query, "limit": 3}, maps_cache_ttl_s=86400)

    assert again == first and len(first) == 3
    assert other == []  # a different question went to the provider
    assert len(osm.requests) == 2


async def test_a_search_another_process_made_is_answered_from_redis(
    osm: FakeNominatim, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis = aioredis.Redis.from_url(redis_url)
    settings = _settings(osm, maps_cache_ttl_s=60)
    first = await providers.run("maps.search", {"query": "cafe"}, settings, redis)
    # Another process: its own copy of the answers is empty; the provider's answer changed
    monkeypatch.setattr(nominatim, "_ANSWERS", cache.TTLCache(max_entries=10))
    osm.records.clear()

    again = await providers.run("maps.search", {"query": "cafe"}, settings, redis)
    await redis.aclose()

    assert again == first and len(first["places"]) == 3
    assert len(osm.requests) == 1


async def test_without_the_cache_every_search_asks_the_provider(osm: FakeNominatim) -> None:
    await _search(osm, {"query": "cafe"})
    await _search(osm, {"query": "cafe"})
    assert len(osm.requests) == 2


async def test_reviews_without_a_provider_that_has_them_name_the_setting(
    osm: FakeNominatim,
) -> None:
    place = (await _search(osm, {"query": "cafe"}))[0]
    with pytest.raises(errors.ProviderNotConfigured, match="LOOKOUT_GOOGLE_PLACES_KEY") as caught:
        await providers.run("maps.reviews", {"place_ref": place["place_ref"]}, _settings(osm))
    assert caught.value.status == 501
    assert len(osm.requests) == 1


async def test_an_empty_nominatim_url_and_no_google_key_is_not_configured() -> None:
    with pytest.raises(errors.ProviderNotConfigured, match="LOOKOUT_NOMINATIM_URL"):
        await providers.run("maps.search", {"query": "cafe"}, providers.settings(nominatim_url=""))
