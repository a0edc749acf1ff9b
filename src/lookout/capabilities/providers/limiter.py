"""Pacers: at most one request per interval, however many callers ask at once.

`Shared` paces every process on the same Redis (the public Nominatim instance's one request a
second is owed by the whole deployment: a web process and two workers paced each on its own
sent up to three a second). `Limiter` paces one process; callers with no Redis at hand (tests,
benchmarks calling an executor directly) use it.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable

import redis.asyncio as aioredis

from lookout import errors, redis_client, redis_keys


class Limiter:
    """Hands out request slots `interval` seconds apart, in the order callers ask.

    A threading lock, not an asyncio one, guards the next free slot: the pace is owed per
    process, and a process may run several event loops (worker threads, tests). The lock is held
    only to reserve a slot; the wait happens outside it.
    """

    def __init__(self, interval: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._next = 0.0

    def reserve(self) -> float:
        """Claim the next slot; the seconds to wait before using it."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        return slot - now

    async def wait(self) -> None:
        """Return once this caller's slot has come."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


# The next free slot of KEYS[1] in Redis' own clock (every process reads the same one), ARGV[1]
# ms apart: reserved, and the ms to wait for it returned; or, when that wait would pass ARGV[2]
# ms, nothing reserved and minus the wait returned. The key expires once its slot has passed.
_RESERVE = redis_client.Script("""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local wait = slot - now
if wait > tonumber(ARGV[2]) then return -wait end
local after = slot + tonumber(ARGV[1])
redis.call('SET', KEYS[1], after, 'PX', after - now)
return wait
""")


class Shared:
    """Request slots `interval` seconds apart for everyone asking for `name` on the same Redis,
    in the order they ask. A caller whose slot would be over `max_wait` seconds away is refused
    (RateLimited, with the seconds after which to retry) instead of queued: a burst of calls
    must not leave the last of them waiting minutes."""

    def __init__(self, name: str, interval: float, *, provider: str, max_wait: float) -> None:
        self.key = redis_keys.pace(name)
        self.interval = interval
        self.provider = provider
        self.max_wait = max_wait

    async def reserve(self, client: aioredis.Redis) -> float:
        """Claim the next slot; the seconds to wait before using it."""
        try:
            wait_ms = int(
                await _RESERVE(
                    client,
                    keys=[self.key],
                    args=[round(self.interval * 1000), round(self.max_wait * 1000)],
                )
            )
        except redis_client.UNREACHABLE as exc:
            raise errors.Unavailable(
                f"The pacer of our requests to {self.provider} is unavailable; retry shortly."
            ) from exc
        if wait_ms < 0:
            retry = max(1, math.ceil(-wait_ms / 1000 - self.max_wait))
            raise errors.RateLimited(
                f"{self.provider} takes one request every {self.interval:g} s and the queue "
                f"for it is full; retry in {retry} s.",
                retry_after=retry,
                provider=self.provider,
            )
        return wait_ms / 1000

    async def wait(self, client: aioredis.Redis) -> None:
        """Return once this caller's slot has come."""
        delay = await self.reserve(client)
        if delay > 0:
            await asyncio.sleep(delay)
