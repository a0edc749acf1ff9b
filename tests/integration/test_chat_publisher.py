"""A turn's publisher against a real Redis: parts in order, coalesced writes, the in-flight
pointer, writes retried while Redis restarts, and what cannot be written raised to the turn."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from lookout import errors, parts, redis_client
from lookout.chat import events
from tests.reliability import faults_stack


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = redis_client.connect(redis_url)
    yield client
    await client.aclose()


async def test_parts_arrive_in_order_in_fewer_writes_than_parts(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a publisher that counts its writes
    chat, turn = uuid.uuid4(), uuid.uuid4()
    writes: list[int] = []
    publish_many = events.publish_many

    async def counted(*args: Any) -> list[str]:
        writes.append(len(args[3]))
        return await publish_many(*args)

    monkeypatch.setattr(events, "publish_many", counted)
    publisher = events.Publisher(redis, chat, turn)

    # When a turn emits a start and a streamed answer without waiting in between
    emitted = [parts.start("m1"), parts.text_start("t")]
    emitted += [parts.text_delta("t", f"word{i} ") for i in range(20)]
    emitted += [parts.text_end("t")]
    for part in emitted:
        await publisher.emit(part)
    await publisher.drain()

    # Then every part is on the stream in order, written in far fewer round trips than parts,
    # and the turn is marked in flight from its start part
    stored = await events.range_after(redis, chat, "0-0")
    assert [part for _, _, part in stored] == emitted
    assert {turn_id for _, turn_id, _ in stored} == {str(turn)}
    assert sum(writes) == len(emitted) and len(writes) <= 2
    assert await events.active_turn(redis, chat) == (str(turn), stored[0][0])

    # And the finish clears the mark
    await publisher.emit(parts.finish())
    await publisher.drain()
    assert await events.active_turn(redis, chat) is None


def count_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The batch size of every write, counted once the write is in Redis."""
    writes: list[int] = []
    publish_many = events.publish_many

    async def counted(*args: Any) -> list[str]:
        ids = await publish_many(*args)
        writes.append(len(args[3]))
        return ids

    monkeypatch.setattr(events, "publish_many", counted)
    return writes


async def test_a_lingering_publisher_writes_a_short_turn_once_at_drain(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a publisher that lingers (a scheduled turn's)
    writes = count_writes(monkeypatch)
    chat, turn = uuid.uuid4(), uuid.uuid4()
    publisher = events.Publisher(redis, chat, turn, linger_s=30)

    # When a turn emits its parts with work in between, all within the linger
    emitted = [parts.start("m1"), parts.text_start("t"), parts.text_delta("t", "hi"),
               parts.text_end("t"), parts.finish()]  # fmt: skip
    for part in emitted:
        await publisher.emit(part)
        await asyncio.sleep(0.01)

    # Then nothing is written until the turn drains, and then all of it in one write
    assert writes == [] and await events.range_after(redis, chat, "0-0") == []
    await publisher.drain()
    assert writes == [len(emitted)]
    assert [part for _, _, part in await events.range_after(redis, chat, "0-0")] == emitted
    assert await events.active_turn(redis, chat) is None


async def test_a_lingering_publisher_still_writes_a_long_turn_as_it_goes(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a publisher that lingers 50 ms
    writes = count_writes(monkeypatch)
    chat, turn = uuid.uuid4(), uuid.uuid4()
    publisher = events.Publisher(redis, chat, turn, linger_s=0.05)

    # When its turn runs longer than that between parts
    await publisher.emit(parts.start("m1"))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if writes:
            break

    # Then the start is written when the linger runs out (the turn shows as in flight), and the
    # parts after it go out with the next write
    assert writes == [1]
    stored = await events.range_after(redis, chat, "0-0")
    assert await events.active_turn(redis, chat) == (str(turn), stored[0][0])
    await publisher.emit(parts.finish())
    await publisher.drain()
    assert writes == [1, 1] and await events.active_turn(redis, chat) is None


async def test_parts_emitted_while_redis_restarts_are_written_once_it_is_back(
    tmp_path: Path,
) -> None:
    # Given a turn streaming through its own redis-server
    server = faults_stack.Redis(tmp_path / "redis")
    redis = redis_client.connect(server.url)
    chat, turn = uuid.uuid4(), uuid.uuid4()
    publisher = events.Publisher(redis, chat, turn)
    before = [parts.start("m1"), parts.text_start("t"), parts.text_delta("t", "one ")]
    during = [parts.text_delta("t", f"word{i} ") for i in range(5)]
    after = [parts.text_end("t"), parts.finish()]
    try:
        for part in before:
            await publisher.emit(part)
        await publisher.drain()

        # When Redis goes away for longer than the client's own retries while the turn goes on
        await asyncio.to_thread(server.stop)
        for part in during:
            await publisher.emit(part)
            await asyncio.sleep(0.3)
        await asyncio.to_thread(server.start)
        for part in after:
            await publisher.emit(part)
        await publisher.drain()

        # Then every part is on the stream once, in order, and the turn ended its mark
        stored = await events.range_after(redis, chat, "0-0")
        active = await events.active_turn(redis, chat)
    finally:
        await redis.aclose()
        server.stop()
    assert [part for _, _, part in stored] == before + during + after
    assert active is None


async def test_a_batch_whose_answer_was_lost_is_not_written_twice(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a write that reaches Redis but whose answer is lost (the connection drops after it)
    publish_many = events.publish_many
    tries: list[int] = []

    async def answer_lost_once(*args: Any) -> list[str]:
        ids = await publish_many(*args)
        tries.append(len(ids))
        if len(tries) == 1:
            raise errors.Unavailable(events.STREAM_AWAY)
        return ids

    monkeypatch.setattr(events, "publish_many", answer_lost_once)
    chat, turn = uuid.uuid4(), uuid.uuid4()
    publisher = events.Publisher(redis, chat, turn)

    # When the publisher tries it again, and the turn goes on
    emitted = [parts.start("m1"), parts.text_start("t"), parts.text_delta("t", "hi")]
    for part in emitted:
        await publisher.emit(part)
    await publisher.drain()
    await publisher.emit(parts.finish())
    await publisher.drain()

    # Then the batch is on the stream once, and the turn's next one after it
    stored = await events.range_after(redis, chat, "0-0")
    assert [part for _, _, part in stored] == [*emitted, parts.finish()]
    assert tries == [3, 0, 1]


async def test_a_turn_ended_while_redis_is_away_reaches_the_stream_once_it_is_back(
    tmp_path: Path,
) -> None:
    # Given a turn that started, then lost its Redis
    server = faults_stack.Redis(tmp_path / "redis")
    redis = redis_client.connect(server.url)
    chat = uuid.uuid4()
    publisher = events.Publisher(redis, chat, uuid.uuid4())
    rest = [parts.text_start("t"), parts.text_delta("t", "late"), parts.text_end("t"),
            parts.finish()]  # fmt: skip
    try:
        await publisher.emit(parts.start("m1"))
        await publisher.drain()
        await asyncio.to_thread(server.stop)

        # When the turn ends while Redis is still away
        for part in rest:
            await publisher.emit(part)
        # Then the turn learns of it at drain, and any later emit is refused (3 s: redis-py's
        # own retries take 0.7 s before the first Unavailable, more on a loaded machine)
        with pytest.raises(errors.Unavailable):
            await publisher.drain(wait_s=3.0)
        with pytest.raises(errors.Unavailable):
            await publisher.emit(parts.text_start("t2"))

        # And once Redis is back the rest of the turn reaches the stream, ending it
        await asyncio.to_thread(server.start)

        async def ended() -> bool:
            return await events.active_turn(redis, chat) is None

        await faults_stack.until(ended, 10)
        stored = await events.range_after(redis, chat, "0-0")
    finally:
        await redis.aclose()
        server.stop()
    assert [part for _, _, part in stored] == [parts.start("m1"), *rest]


async def test_writes_behind_a_turn_are_given_up_after_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn's Redis gone for good, and writes tried 0.5 s behind the turn
    monkeypatch.setattr(events, "LATE_WRITE_S", 0.5)
    server = faults_stack.Redis(tmp_path / "redis")
    redis = redis_client.connect(server.url)
    publisher = events.Publisher(redis, uuid.uuid4(), uuid.uuid4())
    await asyncio.to_thread(server.stop)
    try:
        # When the turn ends
        await publisher.emit(parts.start("m1"))
        with pytest.raises(errors.Unavailable):
            await publisher.drain(wait_s=0.5)

        # Then the write goes on behind the turn for that while, and none is left after it
        async def stopped() -> bool:
            return not [t for t in asyncio.all_tasks() if "Publisher._write" in repr(t.get_coro())]

        assert not await stopped()
        await faults_stack.until(stopped, 10)
    finally:
        await redis.aclose()


async def test_a_write_failing_for_another_reason_is_raised_at_once(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given Redis refusing writes (not away: out of memory)
    async def refused(*args: Any) -> list[str]:
        raise aioredis.ResponseError("OOM command not allowed when used memory > 'maxmemory'.")

    monkeypatch.setattr(events, "publish_many", refused)
    publisher = events.Publisher(redis, uuid.uuid4(), uuid.uuid4())

    # When a part is emitted (the write happens behind it)
    await publisher.emit(parts.start("m1"))

    # Then the turn learns of the failure at drain, without waiting, and at any later emit
    with pytest.raises(aioredis.ResponseError):
        await asyncio.wait_for(publisher.drain(), 1.0)
    with pytest.raises(aioredis.ResponseError):
        await publisher.emit(parts.text_start("t"))


async def test_a_batch_that_starts_and_ends_a_turn_leaves_no_pointer(redis: aioredis.Redis) -> None:
    # Given a notice: a whole turn written at once
    chat, turn = uuid.uuid4(), uuid.uuid4()
    batch = [parts.start("m"), parts.text_start("t"), parts.text_delta("t", "hi"),
             parts.text_end("t"), parts.finish()]  # fmt: skip

    # When it is published
    ids = await events.publish_many(redis, chat, turn, batch)

    # Then it is stored in order and no turn is left marked in flight
    assert [entry_id for entry_id, _, _ in await events.range_after(redis, chat, "0-0")] == ids
    assert await events.active_turn(redis, chat) is None
    assert 0 < await redis.ttl(events.stream_key(chat)) <= events.TTL_S
