"""A turn's publisher against a real Redis: parts in order, coalesced writes, the in-flight
pointer, and a failed write raised to the turn."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from lookout import errors, redis_client
from lookout.chat import events, parts


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


async def test_a_failed_write_is_raised_by_the_next_emit_and_by_drain(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given Redis refusing writes
    async def gone(*args: Any) -> list[str]:
        raise errors.Unavailable("The event stream is unavailable; retry shortly.")

    monkeypatch.setattr(events, "publish_many", gone)
    publisher = events.Publisher(redis, uuid.uuid4(), uuid.uuid4())

    # When a part is emitted (the write happens behind it)
    await publisher.emit(parts.start("m1"))

    # Then the turn learns of the failure: at drain, and at any later emit
    with pytest.raises(errors.Unavailable):
        await publisher.drain()
    with pytest.raises(errors.Unavailable):
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
