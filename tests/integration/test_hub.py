"""The event hub against a real Redis: one XREAD per process however often listeners come and
go, a chat that joins is read at once, and a lost connection is read again."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from lookout import parts, redis_client
from lookout.chat import events, hub
from tests.reliability import faults_stack


@pytest.fixture
async def clients(redis_url: str) -> AsyncIterator[tuple[aioredis.Redis, hub.Hub]]:
    redis = redis_client.connect(redis_url)
    events_hub = hub.Hub(redis, redis_client.listener(redis_url))
    yield redis, events_hub
    await events_hub.close()
    await redis.aclose()


async def blocked_reads(redis: aioredis.Redis) -> int:
    listed = await redis.client_list()
    return sum(client["cmd"] == "xread" for client in listed)


async def next_event(source: AsyncIterator[hub.Event | None], within: float) -> hub.Event:
    async def first() -> hub.Event:
        async for event in source:
            if event is not None:
                return event
        raise AssertionError("the source ended")

    return await asyncio.wait_for(first(), within)


async def caught_up(
    source: AsyncIterator[hub.Event | None], redis: aioredis.Redis, chat: uuid.UUID
) -> None:
    """Publish a marker and read it: the source's catch-up read is behind it, so what it yields
    from now on came from the hub's live XREAD."""
    marker = await events.publish(redis, chat, uuid.uuid4(), parts.text_delta("m", "marker"))
    assert (await next_event(source, hub.IDLE_S))[0] == marker


async def test_listeners_coming_and_going_leave_one_read_and_a_free_pool(
    clients: tuple[aioredis.Redis, hub.Hub],
) -> None:
    # Given 10 listeners that each join and leave one of 20 chats 100 times
    redis, events_hub = clients
    chats = [uuid.uuid4() for _ in range(20)]
    rng = random.Random(7)

    async def listener() -> None:
        for _ in range(100):
            async with events_hub.subscribe(rng.choice(chats), "0-0"):
                await asyncio.sleep(rng.random() * 0.02)

    # When they are done and the hub has settled (a listener failing stops the others)
    async with asyncio.TaskGroup() as listeners:
        for _ in range(10):
            listeners.create_task(listener())

    # Then no reader was left behind: at most the one XREAD, and the shared pool is all free
    # (before the hub woke its reader with CLIENT UNBLOCK, 95 stale readers held the pool)
    async def idle() -> bool:
        in_use = redis.connection_pool._in_use_connections  # type: ignore[attr-defined]
        return await blocked_reads(redis) <= 1 and not in_use

    await faults_stack.until(idle, 5, every=0.05)  # a few round trips; more when loaded
    assert await blocked_reads(redis) <= 1
    assert redis.connection_pool._in_use_connections == set()  # type: ignore[attr-defined]


async def test_a_listener_that_leaves_while_the_first_one_joins_leaves_that_one_listening(
    clients: tuple[aioredis.Redis, hub.Hub], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a chat's first listener held while it marks the chat listened
    redis, events_hub = clients
    chat = uuid.uuid4()
    marked, release = asyncio.Event(), asyncio.Event()
    mark_listened = events.mark_listened

    async def held(redis: aioredis.Redis, chat_ids: list[uuid.UUID]) -> None:
        marked.set()
        await release.wait()
        await mark_listened(redis, chat_ids)

    monkeypatch.setattr(events, "mark_listened", held)

    async def first_listener() -> None:
        async with events_hub.subscribe(chat, "0-0") as source:
            await caught_up(source, redis, chat)

    joining = asyncio.create_task(first_listener())
    await asyncio.wait_for(marked.wait(), 5)

    # When a second listener comes and goes meanwhile (the CI run that saw the first listener's
    # join fail with KeyError: the leaver had deleted the chat it was joining)
    async with events_hub.subscribe(chat, "0-0"):
        pass
    release.set()

    # Then the first listener still joins and reads the chat
    await asyncio.wait_for(joining, hub.IDLE_S * 2)


async def test_a_chat_that_joins_while_the_reader_blocks_is_read_before_the_idle_tick(
    clients: tuple[aioredis.Redis, hub.Hub],
) -> None:
    # Given the reader blocked on one chat
    redis, events_hub = clients
    quiet, joining = uuid.uuid4(), uuid.uuid4()
    async with events_hub.subscribe(quiet, "0-0"):

        async def blocking() -> bool:
            return await blocked_reads(redis) >= 1

        await faults_stack.until(blocking, 5, every=0.05)
        assert await blocked_reads(redis) == 1

        # When a second chat joins and a part is published on it
        async with events_hub.subscribe(joining, "0-0") as source:
            await caught_up(source, redis, joining)
            turn = uuid.uuid4()
            published = await events.publish(redis, joining, turn, parts.text_delta("t", "hi"))
            await asyncio.sleep(0.05)
            later = await events.publish(redis, joining, turn, parts.text_delta("t", "again"))

            # Then both arrive, well before the reader's 5 s block would have ended on its own
            first = await next_event(source, hub.IDLE_S / 2)
            second = await next_event(source, hub.IDLE_S / 2)
    assert (first[0], second[0]) == (published, later)
    assert second[2]["delta"] == "again"


async def test_the_reader_reads_again_after_its_connection_is_killed(
    clients: tuple[aioredis.Redis, hub.Hub],
) -> None:
    # Given a listener whose reader blocks
    redis, events_hub = clients
    chat = uuid.uuid4()
    async with events_hub.subscribe(chat, "0-0") as source:
        await caught_up(source, redis, chat)
        await asyncio.sleep(0.2)

        # When Redis drops the reader's connection and a part is published afterwards
        killed = await redis.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        published = await events.publish(redis, chat, uuid.uuid4(), parts.text_delta("t", "x"))

        # Then the part still arrives (the reader reconnects after its retry pause)
        event = await next_event(source, hub.IDLE_S)
    assert killed >= 1
    assert event[0] == published


async def test_no_wake_ups_are_sent_once_every_listener_has_left(
    clients: tuple[aioredis.Redis, hub.Hub],
) -> None:
    # Given the reader blocked on one chat, and Redis's command counts reset
    redis, events_hub = clients
    async with events_hub.subscribe(uuid.uuid4(), "0-0"):
        await asyncio.sleep(0.2)
        await redis.config_resetstat()

        # When a second chat joins and every listener leaves before the reader re-reads
        async with events_hub.subscribe(uuid.uuid4(), "0-0"):
            pass
    await asyncio.sleep(0.5)

    # Then the wake-ups stopped with the listeners (before, CLIENT UNBLOCK every 5 ms until
    # somebody joined again: ~100 in this half second)
    stats = await redis.info("commandstats")
    assert stats.get("cmdstat_client|unblock", {}).get("calls", 0) <= 5
