"""A client's script lane against a real Redis: each call answered once with its own answer,
whatever the lane cannot answer in step asked again through redis-py, nothing left open."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from lookout import redis_client, redis_keys
from lookout.access import ratelimit

# Answers its ARGV[1], after ARGV[2] turns of a busy loop (a slow script, to cancel in flight).
ECHO = redis_client.Script(
    "local n = 0 for i = 1, tonumber(ARGV[2]) do n = n + 1 end return ARGV[1]"
)


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[redis_client.Client]:
    client = redis_client.connect(redis_url)
    yield client
    await client.aclose()


async def test_calls_at_once_are_each_counted_once_and_the_lane_stays_bounded(
    client: redis_client.Client,
) -> None:
    # Given a limit of 100 a minute
    subject = f"key:{uuid.uuid4()}"

    # When 60 requests are counted at once, more than the lane has connections
    decisions = await asyncio.gather(
        *(ratelimit.hit(client, subject=subject, limit=100) for _ in range(60))
    )

    # Then each is counted once: the remaining counts are 99 down to 40, each once
    assert sorted(d.remaining for d in decisions) == list(range(40, 100))
    assert all(d.admitted for d in decisions)
    # and the lane opened at most its bound, the rest went through redis-py's pool
    assert 0 < len(client.lane.idle) <= redis_client.LANE_CONNECTIONS
    assert client.lane.busy == 0


async def test_a_script_redis_forgot_is_loaded_again(client: redis_client.Client) -> None:
    # Given the lane has run the script once
    subject = f"key:{uuid.uuid4()}"
    first = await ratelimit.hit(client, subject=subject, limit=10)
    assert client.lane.idle

    # When Redis forgets its scripts (SCRIPT FLUSH; a restart does the same)
    await client.script_flush()
    second = await ratelimit.hit(client, subject=subject, limit=10)
    third = await ratelimit.hit(client, subject=subject, limit=10)

    # Then the next calls are answered, each counted once
    assert [first.remaining, second.remaining, third.remaining] == [9, 8, 7]


async def test_a_call_cancelled_in_flight_leaves_no_answer_for_the_next(
    client: redis_client.Client,
) -> None:
    # Given a slow call through the lane, cancelled while Redis runs it
    await ECHO(client, keys=[], args=["warm", 1])
    slow = asyncio.create_task(ECHO(client, keys=[], args=["slow", 3_000_000]))
    await asyncio.sleep(0.01)
    assert not slow.done()
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow

    # When the next calls go through the lane
    answers = [await ECHO(client, keys=[], args=[f"call {n}", 1]) for n in range(3)]

    # Then each reads its own answer, not the cancelled call's
    assert answers == [b"call 0", b"call 1", b"call 2"]


async def test_a_script_error_is_raised_and_the_lane_carries_on(
    client: redis_client.Client,
) -> None:
    # Given a key of another type than the rate limiter's sorted set
    subject = f"key:{uuid.uuid4()}"
    await client.set(redis_keys.rate_limit(subject), "not a sorted set")

    # When it is counted, Redis' error is raised (not asked again through redis-py)
    with pytest.raises(aioredis.ResponseError, match="WRONGTYPE"):
        await ratelimit.hit(client, subject=subject, limit=10)

    # Then the lane answers the next call in step
    assert (await ratelimit.hit(client, subject=f"key:{uuid.uuid4()}", limit=10)).remaining == 9


async def test_closing_the_client_closes_the_lane(redis_url: str) -> None:
    # Given a client whose lane has connections
    client = redis_client.connect(redis_url)
    await asyncio.gather(*(ECHO(client, keys=[], args=["x", 1]) for _ in range(4)))
    observer = aioredis.Redis.from_url(redis_url)
    try:
        before = len(await observer.client_list())
        opened = len(client.lane.idle)
        assert opened >= 1

        # When the client is closed
        await client.aclose()

        # Then the lane's connections are closed with the pool's, and it opens no more
        await asyncio.sleep(0.1)
        after = len(await observer.client_list())
        assert after <= before - opened
        assert client.lane.idle == []
        assert await client.lane.evalsha("0" * 40, [], []) is redis_client._ASIDE
    finally:
        await observer.aclose()
