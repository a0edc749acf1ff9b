"""A search's, a site's and a maps search's watch keep their results at each check: the history
opens them as they were and compares two checks item by item (before -> after), deduplicated and
compressed like a page watch's pages; the watches page never takes a search for a page."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
from aiohttp import web

from lookout import app
from lookout.access.services import Services
from lookout.agent import graph
from lookout.capabilities import fetch
from lookout.db import checkpointer
from lookout.db import history as history_db
from lookout.routes import openapi_board as board_schema
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.providers import FakePlaces, ServerFactory
from tests.integration.test_watch_history import Stack

__all__ = ["tenant_factory"]


@pytest.fixture
async def places(aiohttp_server: ServerFactory) -> FakePlaces:
    fake = FakePlaces()
    await providers.serve(fake, aiohttp_server)
    return fake


@pytest.fixture
async def site(aiohttp_server: Any) -> dict[str, Any]:
    """A small site whose home page links to the pages listed in `pages`."""
    state: dict[str, Any] = {"pages": ["/menu", "/hours"]}

    async def home(request: web.Request) -> web.Response:
        links = "".join(f'<li><a href="{path}">{path[1:]}</a></li>' for path in state["pages"])
        return web.Response(text=f"<html><body><ul>{links}</ul></body></html>",
                            content_type="text/html")  # fmt: skip

    async def leaf(request: web.Request) -> web.Response:
        return web.Response(text="<html><body>a page</body></html>", content_type="text/html")

    site_app = web.Application()
    site_app.router.add_get("/", home)
    site_app.router.add_get("/{name}", leaf)
    server = await aiohttp_server(site_app)
    state["url"] = str(server.make_url("/"))
    return state


@pytest.fixture
async def stack(
    settings: Settings, redis_url: str, db: asyncpg.Pool, aiohttp_client: Any, places: FakePlaces
) -> AsyncIterator[Stack]:
    settings = settings.replace(
        google_places_url=places.url, google_places_key=providers.GOOGLE_KEY
    )
    redis = aioredis.Redis.from_url(redis_url)
    async with (
        fetch.open_session(settings) as http,
        checkpointer.saver_context(settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=settings)
        client = await aiohttp_client(app.create_app(settings))
        yield Stack(services, graph.build(saver), client)
    await redis.aclose()


async def test_a_maps_watch_keeps_its_places_per_check_and_shows_what_changed(
    stack: Stack, tenant_factory: TenantFactory, places: FakePlaces, db: asyncpg.Pool
) -> None:
    # Given a maps watch checked three times: once as it was, once unchanged, then a place's
    # rating changes, one place closes for good and a new one opens
    tenant = await tenant_factory(credits=100)
    watch = await stack.watch(tenant, "watch chinese restaurants near Sydney every day")
    first = await stack.check(watch["id"])
    same = await stack.check(watch["id"])
    places.places[0]["rating"] = 4.7
    places.places[2] = providers.google_place(7)
    changed = await stack.check(watch["id"])

    # When its history is read
    status, body = await stack.call("GET", f"/api/automations/{watch['id']}/history", tenant)

    # Then every check kept the results (the watches page still shows no page for it)
    assert status == 200, body
    assert [c["pages"] for c in body["data"]["checks"]] == [1, 1, 1]
    _, listed = await stack.call("GET", "/api/watches", tenant)
    [row] = listed["data"]["watches"]
    assert row["url"] is None and row["page_title"] is None

    # And the check that changed opens its places, with the diff against the check before
    path = f"/api/automations/{watch['id']}/history/{changed}"
    status, detail = await stack.call("GET", path, tenant)
    assert status == 200, detail
    assert board_schema.CheckDetail().validate(detail["data"]) == {}  # as documented
    [kept] = detail["data"]["pages"]
    assert kept["kind"] == "items" and kept["title"].startswith("maps.search")
    assert "Spice Temple 7" in kept["content"] and "Spice Temple 2" not in kept["content"]
    diff = kept["diff"]
    assert diff["changed"] and diff["counts"] == {
        "modified": 1, "added": 1, "removed": 1, "moved": 0,
    }  # fmt: skip
    [modified] = diff["modified"]
    assert "4.4" in modified["before"] and "4.7" in modified["after"]
    assert any("Spice Temple 7" in line for line in diff["added"])
    assert any("Spice Temple 2" in line for line in diff["removed"])
    assert any(line.startswith("~ ") and "4.7" in line for line in diff["lines"]), diff

    # And compared with itself unchanged, the second check says no change; against the first,
    # a pick of any other check works too
    _, quiet = await stack.call("GET", f"/api/automations/{watch['id']}/history/{same}", tenant)
    assert quiet["data"]["pages"][0]["diff"]["changed"] is False
    path = f"/api/automations/{watch['id']}/history/{changed}?against={first}"
    _, picked = await stack.call("GET", path, tenant)
    assert picked["data"]["pages"][0]["diff"]["counts"]["added"] == 1

    # And the unchanged results were stored once (three checks, two contents)
    stored = await db.fetchval(
        "SELECT count(*) FROM page_contents WHERE automation_id = $1::uuid", watch["id"]
    )
    assert stored == 2
    assert await history_db.history_storage(db, automation_id=uuid.UUID(watch["id"])) < 20_000


async def test_a_site_watch_keeps_its_links_and_shows_a_new_page(
    stack: Stack, tenant_factory: TenantFactory, site: dict[str, Any]
) -> None:
    # Given a watch of a site's pages, checked before and after a page is added
    tenant = await tenant_factory(credits=100)
    watch = await stack.watch(tenant, f"watch the pages of {site['url']} every day")
    await stack.check(watch["id"])
    site["pages"] = ["/menu", "/hours", "/events"]
    changed = await stack.check(watch["id"])

    # When the second check is opened
    path = f"/api/automations/{watch['id']}/history/{changed}"
    status, detail = await stack.call("GET", path, tenant)

    # Then its links are there and the new page is what was added
    assert status == 200, detail
    [kept] = detail["data"]["pages"]
    assert kept["kind"] == "items" and "/events" in kept["content"]
    assert [line for line in kept["diff"]["added"] if "/events" in line]
    assert kept["diff"]["counts"]["removed"] == 0
