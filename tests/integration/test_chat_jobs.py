"""Slow verbs from chat: progress while waiting; past the deadline the result is posted later."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from lookout import app
from lookout.settings import Settings
from tests.integration import sse, workers
from tests.integration.factories import Site, TenantFactory, site, tenant_factory

__all__ = ["site", "tenant_factory"]


@pytest.fixture
def slow_settings(settings: Settings) -> Settings:
    return settings.replace(job_wait_s=0.2, chat_job_deadline_s=1.0)


@pytest.fixture
def worker(slow_settings: Settings) -> Iterator[None]:
    with workers.running_worker(slow_settings, processes=1, threads=2):
        yield


async def test_a_job_past_the_deadline_is_posted_to_the_chat_when_done(
    aiohttp_client: Any, slow_settings: Settings, tenant_factory: TenantFactory, site: Site,
    worker: None,
) -> None:  # fmt: skip
    # Given a chat and six slow pages (more than a chat turn scrapes inline)
    client = await aiohttp_client(app.create_app(slow_settings))
    base = str(client.make_url("")).rstrip("/")
    tenant = await tenant_factory(credits=20)
    chat = await (await client.post("/api/chats", json={}, headers=tenant.headers)).json()
    chat_id = chat["data"]["id"]
    site.delay = 3.0
    urls = " ".join(site.url(f"/slow/{i}") for i in range(6))

    # When the user asks, the turn streams job progress, then stops waiting
    turn = await sse.stream(
        base, "POST", f"/api/chats/{chat_id}/messages", headers=tenant.headers,
        json_body={"text": f"compare {urls}"},
    )  # fmt: skip

    # Then the answer says the result will follow, and it does, as its own message
    assert "data-job" in turn.types and turn.types[-1] == "finish"
    assert "I'll post the result here" in turn.text
    # (60 s: the worker, not waited for, boots, reads 3 s of pages and posts, on a loaded machine)
    deadline = asyncio.get_running_loop().time() + 60
    while asyncio.get_running_loop().time() < deadline:
        listed = await client.get(f"/api/chats/{chat_id}/messages", headers=tenant.headers)
        stored = (await listed.json())["data"]["messages"]
        if len(stored) == 3:
            break
        await asyncio.sleep(0.2)
    late = stored[-1]
    assert late["role"] == "assistant" and late["source"] == "automation"
    text = "".join(p.get("text", "") for p in late["parts"])
    assert text.startswith("Job ") and "Comparing " in text
