"""The provider answer cache every process shares through Redis: bounded, timed, never failing."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from aiohttp.test_utils import unused_port

from lookout.capabilities.providers import cache


async def test_it_keeps_the_newest_entries_each_for_its_time(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    shared = cache.Shared("test", max_entries=3)
    for n in range(4):
        await shared.put(client, f"k{n}", {"n": n}, 60)
    await shared.put(client, "brief", [1], 1.0)  # the fifth: k0 and k1 are dropped

    kept = [await shared.get(client, f"k{n}") for n in range(4)]
    brief = await shared.get(client, "brief")
    await asyncio.sleep(1.1)
    expired = await shared.get(client, "brief")
    indexed, stored = await client.zcard(shared.index), len(await client.keys(shared.prefix + "*"))
    await client.aclose()

    assert [entry[0] if entry else None for entry in kept] == [None, None, {"n": 2}, {"n": 3}]
    assert all(50 < entry[1] <= 60 for entry in kept if entry)  # (a loaded machine)
    assert brief is not None and brief[0] == [1] and 0 < brief[1] <= 1.0
    assert expired is None
    assert (indexed, stored) == (3, 2)  # the expired entry leaves the index when pushed out


async def test_nothing_is_kept_for_no_time(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    shared = cache.Shared("test", max_entries=3)

    await shared.put(client, "k", [1], 0)

    assert await shared.get(client, "k") is None
    assert await client.zcard(shared.index) == 0
    await client.aclose()


async def test_redis_away_is_a_miss_and_a_put_not_kept() -> None:
    client = aioredis.Redis.from_url(f"redis://127.0.0.1:{unused_port()}")
    shared = cache.Shared("test", max_entries=3)

    await shared.put(client, "k", [1], 60)

    assert await shared.get(client, "k") is None
    await client.aclose()
