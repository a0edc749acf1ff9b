"""What a scheduled turn costs and keeps: its parts in one Redis batch when nobody listens (counted
by Redis itself: INFO commandstats, which counts what a script runs as MONITOR shows it), its
stored answer the verdict and what changed and not the page, and the next turn still reading
the earlier one from the checkpoint."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis

from lookout import redis_client
from lookout.chat import events, hub
from lookout.settings import Settings
from tests.integration import test_watches
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_watches import InProcess, executed, in_process, make_watch, page

__all__ = ["in_process", "page", "tenant_factory"]

_PAGE_WORDS = "The soup is made fresh every morning from vegetables of the season"


@pytest.fixture
async def counter(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = redis_client.connect(redis_url)
    yield client
    await client.aclose()


async def commands(client: aioredis.Redis) -> dict[str, int]:
    """Calls per command since the last reset, the INFO/CONFIG calls of the counting left out."""
    stats: dict[str, Any] = await client.info("commandstats")
    found = {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}
    counting = ("info", "config|resetstat")
    return {name: calls for name, calls in found.items() if name not in counting}


async def latest_turn(client: aioredis.Redis, chat_id: uuid.UUID) -> list[dict[str, Any]]:
    """The parts of the chat's latest turn on its stream."""
    stream = await events.range_after(client, chat_id, "0-0")
    return [part for _, turn, part in stream if turn == stream[-1][1]]


async def stored_answers(db: asyncpg.Pool, chat_id: uuid.UUID) -> list[list[dict[str, Any]]]:
    rows = await db.fetch(
        "SELECT parts FROM chat_messages WHERE chat_id = $1 AND role = 'assistant' ORDER BY seq",
        chat_id,
    )
    return [list(row["parts"]) for row in rows]


async def test_an_unattended_scheduled_turn_writes_its_parts_in_one_batch(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory,
    page: dict[str, Any], in_process: InProcess, counter: aioredis.Redis,
) -> None:  # fmt: skip
    # Given a watch whose first run saw the page, and nobody listening to its chat
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    await executed(db, in_process, watch)
    await counter.config_resetstat()

    # When the next scheduled run finds the page changed
    page["lines"] = ["Soup of the day", "Apple tart"]
    _, status = await executed(db, in_process, watch)

    # Then its parts went to Redis in one script call, one stream entry per part, and its
    # streamed answer is one text delta, not one every few words
    assert status == "succeeded"
    used = await commands(counter)
    latest = await latest_turn(counter, watch.chat_id)
    assert used.get("evalsha", 0) + used.get("eval", 0) == 1, used
    assert used["xadd"] == len(latest), used
    assert [p["type"] for p in latest].count("text-delta") == 1
    assert latest[0]["type"] == "start" and latest[-1]["type"] == "finish"
    assert "Apple tart" in next(p["delta"] for p in latest if p["type"] == "text-delta")
    assert sum(used.values()) <= 16, used  # was 28-44 on realistic pages (issue #30)


async def test_a_listened_scheduled_turn_streams_as_it_goes(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory,
    page: dict[str, Any], in_process: InProcess, counter: aioredis.Redis, redis_url: str,
) -> None:  # fmt: skip
    # Given a watch whose chat someone is listening to (the web process's hub reads it)
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    await executed(db, in_process, watch)
    listening = hub.Hub(counter, redis_client.listener(redis_url))
    try:
        async with listening.subscribe(watch.chat_id, await events.last_id(counter, watch.chat_id)):
            assert await events.listened(counter, watch.chat_id)
            await counter.config_resetstat()

            # When the next scheduled run finds the page changed
            page["lines"] = ["Soup of the day", "Apple tart"]
            _, status = await executed(db, in_process, watch)
    finally:
        await listening.close()

    # Then the answer streamed word by word, as an interactive one does
    assert status == "succeeded"
    latest = await latest_turn(counter, watch.chat_id)
    assert [p["type"] for p in latest].count("text-delta") > 1


async def test_a_scheduled_runs_stored_answer_is_its_verdict_and_changes_not_the_page(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory,
    page: dict[str, Any], in_process: InProcess,
) -> None:  # fmt: skip
    # Given a watch of a page with a long paragraph, whose first run saw it
    tenant = await tenant_factory()
    page["lines"] = ["Soup of the day", _PAGE_WORDS * 40]
    watch = await make_watch(db, settings, tenant, page["url"])
    await executed(db, in_process, watch)

    # When the page changes, and then does not
    page["lines"] = ["Soup of the day", "Apple tart", _PAGE_WORDS * 40]
    _, changed = await executed(db, in_process, watch)
    _, unchanged = await executed(db, in_process, watch)
    page["lines"] = ["Soup of the day", "Pear tart", _PAGE_WORDS * 40]
    _, changed_again = await executed(db, in_process, watch)

    # Then the first answer read the page; the later ones say what changed (or that nothing
    # did) without the page's text, and keep the changes as data
    assert (changed, unchanged, changed_again) == ("succeeded",) * 3
    first, *later = await stored_answers(db, watch.chat_id)
    said = await test_watches.answers(db, watch.chat_id)
    assert _PAGE_WORDS in said[0]
    assert "Changed since" in said[1] and "Apple tart" in said[1]
    assert "No change since" in said[2]
    # And the next change is still reported against the checkpoint's snapshot, not the stored
    # answer: "Apple tart" → "Pear tart"
    assert "Changed since" in said[3] and "«Apple → Pear» tart" in said[3]
    for stored in later:
        text = str(stored)
        assert _PAGE_WORDS * 8 not in text  # nowhere: not in the text, not in the tool output
        assert len(text) < 3_000, len(text)
        scrape = next(p for p in stored if p["type"] == "tool-web_scrape")
        assert scrape["output"]["pages"][0]["content_hash"].startswith("sha256:")
    assert any(p["type"] == "data-diff" and p["data"]["changed"] for p in later[0])
    assert len(str(first)) > len(_PAGE_WORDS) * 40  # the first look keeps what it read
