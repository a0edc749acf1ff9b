"""The agent through the chat door: maps chains, deleting a chat, watch edges."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.settings import Settings
from tests.integration import providers, sse
from tests.integration.factories import Site, Tenant, TenantFactory, site, tenant_factory
from tests.integration.providers import FakePlaces, ServerFactory

__all__ = ["site", "tenant_factory"]


@pytest.fixture
async def places(aiohttp_server: ServerFactory) -> FakePlaces:
    fake = FakePlaces()
    await providers.serve(fake, aiohttp_server)
    return fake


async def chat_of(client: Any, tenant: Tenant) -> tuple[str, str]:
    created = await (await client.post("/api/chats", json={}, headers=tenant.headers)).json()
    return str(client.make_url("")).rstrip("/"), created["data"]["id"]


async def say(client: Any, tenant: Tenant, chat_id: str, text: str) -> sse.Stream:
    base = str(client.make_url("")).rstrip("/")
    return await sse.stream(
        base, "POST", f"/api/chats/{chat_id}/messages", headers=tenant.headers,
        json_body={"text": text},
    )  # fmt: skip


async def test_reviews_of_a_named_place_chain_search_then_reviews(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, places: FakePlaces
) -> None:
    google = settings.replace(google_places_url=places.url, google_places_key=providers.GOOGLE_KEY)
    client = await aiohttp_client(app.create_app(google))
    tenant = await tenant_factory(credits=10)
    _, chat_id = await chat_of(client, tenant)

    result = await say(
        client, tenant, chat_id, "what do the reviews of Spice Temple in Sydney say?"
    )

    calls = [p for p in result.parts if p["type"] == "tool-input-available"]
    assert [c["toolName"] for c in calls] == ["maps_search", "maps_reviews"]
    place_ref = calls[1]["input"]["place_ref"]
    assert place_ref.startswith("google:")
    assert "Reviews of **Spice Temple 0**" in result.text
    assert "dumplings were excellent" in result.text


async def test_places_near_a_location(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, places: FakePlaces
) -> None:
    google = settings.replace(google_places_url=places.url, google_places_key=providers.GOOGLE_KEY)
    client = await aiohttp_client(app.create_app(google))
    tenant = await tenant_factory(credits=10)
    _, chat_id = await chat_of(client, tenant)

    result = await say(client, tenant, chat_id, "find chinese restaurants near Sydney")

    call = next(p for p in result.parts if p["type"] == "tool-input-available")
    assert call["toolName"] == "maps_search" and call["input"]["near"] == "Sydney"
    assert "**Spice Temple 1**" in result.text and "rated 4.4" in result.text


async def test_deleting_a_chat_deletes_its_checkpoints_and_watch(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, site: Site,
    db: asyncpg.Pool,
) -> None:  # fmt: skip
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    _, chat_id = await chat_of(client, tenant)
    started = await say(client, tenant, chat_id, f"watch {site.url('/w')} every day")
    assert any(p["type"] == "data-watch" for p in started.parts)
    assert await db.fetchval("SELECT count(*) FROM checkpoints WHERE thread_id = $1", chat_id)

    deleted = await client.delete(f"/api/chats/{chat_id}", headers=tenant.headers)

    assert deleted.status == 200
    assert await db.fetchval("SELECT count(*) FROM checkpoints WHERE thread_id = $1", chat_id) == 0
    assert await db.fetchval("SELECT count(*) FROM automations") == 0
    assert await db.fetchval("SELECT count(*) FROM chat_messages") == 0
    gone = await client.get(f"/api/chats/{chat_id}", headers=tenant.headers)
    assert gone.status == 404


async def test_a_watch_start_says_what_it_will_cost(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, site: Site
) -> None:
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    _, chat_id = await chat_of(client, tenant)

    started = await say(client, tenant, chat_id, f"keep an eye on {site.url('/c')} every morning")

    assert "every day at 08:00 UTC" in started.text
    assert "about 30 credits a month" in started.text
