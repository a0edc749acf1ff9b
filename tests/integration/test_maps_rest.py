"""The maps and search verbs through the REST door: prices charged, provider refusals as a
client sees them (status, envelope, Retry-After), and nothing charged for a failure."""

from __future__ import annotations

import time
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis

from lookout import app
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.providers import FakeNominatim, FakePlaces, FakeSearxng, ServerFactory
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

__all__ = ["tenant_factory"]

pytestmark = pytest.mark.usefixtures("loopback_only")


@pytest.fixture
async def fakes(aiohttp_server: ServerFactory) -> tuple[FakeNominatim, FakePlaces, FakeSearxng]:
    osm, places, searxng = FakeNominatim(), FakePlaces(), FakeSearxng()
    for fake in (osm, places, searxng):
        await providers.serve(fake, aiohttp_server)
    return osm, places, searxng


async def _client(aiohttp_client: Any, settings: Settings, **providers_at: Any) -> Any:
    # Private networks off, as in production: the providers are reached as trusted hosts.
    return await aiohttp_client(
        app.create_app(settings.replace(allow_private_networks=False, **providers_at))
    )


async def test_maps_search_costs_one_credit(
    aiohttp_client: Any,
    settings: Settings,
    fakes: tuple[FakeNominatim, FakePlaces, FakeSearxng],
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
) -> None:
    osm = fakes[0]
    client = await _client(aiohttp_client, settings, nominatim_url=osm.url)
    tenant = await tenant_factory(credits=5)

    response = await client.post(
        "/v1/maps/search", json={"query": "cafe", "near": "Berlin"}, headers=tenant.headers
    )

    body = await response.json()
    assert response.status == 200, body
    assert body["data"]["places"][0]["place_ref"] == "nominatim:N2466789001"
    assert body["meta"]["credits_charged"] == 1
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 4


async def test_search_then_reviews_through_the_door(
    aiohttp_client: Any,
    settings: Settings,
    fakes: tuple[FakeNominatim, FakePlaces, FakeSearxng],
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
) -> None:
    places = fakes[1]
    google = {"google_places_url": places.url, "google_places_key": providers.GOOGLE_KEY}
    client = await _client(aiohttp_client, settings, **google)
    tenant = await tenant_factory(credits=5)

    found = await client.post("/v1/maps/search", json={"query": "ramen"}, headers=tenant.headers)
    place_ref = (await found.json())["data"]["places"][0]["place_ref"]
    response = await client.post(
        "/v1/maps/reviews", json={"place_ref": place_ref, "limit": 2}, headers=tenant.headers
    )

    body = await response.json()
    assert response.status == 200, body
    assert body["data"]["place"]["place_ref"] == place_ref
    assert [review["author"] for review in body["data"]["reviews"]] == ["Reviewer 0", "Reviewer 1"]
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 3


async def test_a_providers_429_reaches_the_client_with_its_retry_after_and_costs_nothing(
    aiohttp_client: Any,
    settings: Settings,
    fakes: tuple[FakeNominatim, FakePlaces, FakeSearxng],
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
) -> None:
    osm = fakes[0]
    osm.fail_with(429, "slow down", content_type="text/plain", headers={"Retry-After": "9"})
    client = await _client(aiohttp_client, settings, nominatim_url=osm.url)
    tenant = await tenant_factory(credits=5)

    response = await client.post("/v1/maps/search", json={"query": "x"}, headers=tenant.headers)

    body = await response.json()
    assert response.status == 429, body
    assert response.headers["Retry-After"] == "9"
    assert body["error"]["code"] == "rate_limited"
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 5


async def test_a_public_search_whose_turn_is_too_far_off_is_429_and_costs_nothing(
    aiohttp_client: Any,
    settings: Settings,
    fakes: tuple[FakeNominatim, FakePlaces, FakeSearxng],
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
) -> None:
    # Given the deployment's queue for the public instance 60 s long (other processes' searches)
    osm = fakes[0]
    client = await _client(aiohttp_client, settings, nominatim_url=osm.url, nominatim_public=True)
    tenant = await tenant_factory(credits=5)
    redis = aioredis.Redis.from_url(settings.redis_url)
    await providers.queue_public_nominatim(redis, 60)
    await redis.aclose()
    queued = time.monotonic()

    response = await client.post("/v1/maps/search", json={"query": "x"}, headers=tenant.headers)

    body = await response.json()
    assert response.status == 429, body
    assert body["error"]["code"] == "rate_limited"
    # 60 s queued, 30 s may be waited: 30 s less the time since (a loaded machine is slow)
    waited = time.monotonic() - queued
    assert 29 - waited <= int(response.headers["Retry-After"]) <= 31
    assert osm.requests == []
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 5


async def test_a_failing_provider_is_502_upstream_error(
    aiohttp_client: Any,
    settings: Settings,
    fakes: tuple[FakeNominatim, FakePlaces, FakeSearxng],
    tenant_factory: TenantFactory,
) -> None:
    osm = fakes[0]
    osm.fail_with(503, "<html>down</html>", content_type="text/html")
    client = await _client(aiohttp_client, settings, nominatim_url=osm.url)
    tenant = await tenant_factory()

    response = await client.post("/v1/maps/search", json={"query": "x"}, headers=tenant.headers)

    assert response.status == 502
    assert (await response.json())["error"]["code"] == "upstream_error"


async def test_reviews_without_google_is_501_naming_the_setting(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory
) -> None:
    client = await _client(aiohttp_client, settings)
    tenant = await tenant_factory()

    response = await client.post(
        "/v1/maps/reviews", json={"place_ref": "nominatim:N1"}, headers=tenant.headers
    )

    body = await response.json()
    assert response.status == 501
    assert body["error"]["code"] == "provider_not_configured"
    assert "LOOKOUT_GOOGLE_PLACES_KEY" in body["error"]["message"]


async def test_a_search_is_charged_per_ten_results_after_reserving_for_its_limit(
    aiohttp_client: Any,
    settings: Settings,
    fakes: tuple[FakeNominatim, FakePlaces, FakeSearxng],
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
) -> None:
    searxng = fakes[2]
    client = await _client(aiohttp_client, settings, search_url=searxng.url)
    poor, rich = await tenant_factory(credits=4), await tenant_factory(credits=10)

    refused = await client.post(
        "/v1/web/discover", json={"query": "flood", "limit": 50}, headers=poor.headers
    )
    response = await client.post(
        "/v1/web/discover", json={"query": "flood", "limit": 50}, headers=rich.headers
    )

    assert refused.status == 402  # a limit of 50 may cost 5 credits
    body = await response.json()
    assert response.status == 200, body
    assert len(body["data"]["links"]) == 25
    assert body["meta"]["credits_charged"] == 3
    assert await repo.get_balance(db, workspace_id=rich.workspace.id) == 7
    assert len(searxng.requests) == 4  # all from the call that could pay
