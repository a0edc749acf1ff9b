"""A watch on a page that builds its content with JavaScript: the first answer is the rendered
page (the web process hands the call to a worker), later scheduled runs keep rendering it, and
what changed compares the rendered content."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from lookout import broker
from lookout.capabilities import rendering
from lookout.settings import Settings
from lookout.watches import schedule
from tests.integration import test_render, workers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_notify_watches import Stack, receiver, stack
from tests.integration.test_watch_conditions import new_chat, run_once, say, the_watch

__all__ = ["receiver", "stack", "tenant_factory"]

chromium = test_render.chromium


@pytest.fixture
async def shop(aiohttp_server: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"price": 59}

    async def shell(request: web.Request) -> web.Response:
        return web.Response(text=test_render.SHELL, content_type="text/html")

    async def data(request: web.Request) -> web.Response:
        text = f"The storm lantern is in stock at {state['price']} euros and ships tomorrow."
        body = {"name": "Lantern 3000", "text": text}
        return web.Response(text=json.dumps(body), content_type="application/json")

    app = web.Application()
    app.router.add_get("/shell", shell)
    app.router.add_get("/data.json", data)
    server = await aiohttp_server(app)
    state["url"] = str(server.make_url("/shell"))
    return state


@pytest.fixture
def worker(settings: Settings, chromium: str) -> Iterator[None]:
    broker.setup(settings)
    with workers.running_worker(settings, processes=1, threads=3):
        yield


async def test_a_watched_shell_keeps_being_rendered_and_its_changes_are_seen(
    db: asyncpg.Pool, stack: Stack, tenant_factory: TenantFactory, shop: dict[str, Any],
    worker: None,
) -> None:  # fmt: skip
    # Given a chat, and a shop page whose price only its script shows
    tenant = await tenant_factory(credits=100)
    chat_id = await new_chat(stack, tenant)

    # When the person asks to watch it
    said = await say(stack, tenant, chat_id, f"watch {shop['url']} every day")

    # Then the answer read the rendered page (a worker rendered it), and a watch started
    assert "59 euros" in said.text, said.text
    watch = await the_watch(stack, tenant, chat_id)
    # And its estimate of credits a month prices the page as the rendered page it is
    runs = schedule.runs_per_month(watch["cadence"], watch["timezone"], dt.datetime.now(dt.UTC))
    assert watch["credits_per_month"] == runs * rendering.RENDERED_UNITS, watch

    # When the price changes and the watch runs
    shop["price"] = 49
    [run] = await run_once(db, watch["id"], 1)

    # Then the run asked for the browser outright, and said what changed in the rendered text
    assert run.status == "succeeded"
    inputs = [row["input"] for row in await db.fetch(
        "SELECT input FROM jobs WHERE verb = 'web.scrape' ORDER BY created_at"
    )]  # fmt: skip
    assert inputs[-1].get("render") == "always", inputs
    rows = await db.fetch(
        "SELECT parts FROM chat_messages WHERE chat_id = $1 AND role = 'assistant' "
        "AND source = 'automation' ORDER BY seq",
        uuid.UUID(chat_id),
    )
    text = "".join(p.get("text", "") for p in rows[-1]["parts"] if p["type"] == "text")
    assert "59" in text and "49" in text, text
