"""Caches of provider answers: in the process (`TTLCache`), and in Redis for every process of
the deployment (`Shared`). What they save is requests to a rate-limited provider; the process's
own copy saves the round trip to Redis.
"""

from __future__ import annotations

import collections
import hashlib
import json
import logging
import threading
import time
import zlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import redis.asyncio as aioredis

from lookout import redis_client, redis_keys

logger = logging.getLogger(__name__)

V = TypeVar("V")


class TTLCache(Generic[V]):
    def __init__(self, *, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict[str, tuple[float, V]] = collections.OrderedDict()

    def get(self, key: str) -> V | None:
        """The value stored under `key`, unless it has expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, value = entry
            if expires <= self._clock():
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return value

    def put(self, key: str, value: V, ttl_s: float) -> None:
        """Keep `value` for `ttl_s` seconds (0 keeps nothing)."""
        if ttl_s <= 0:
            return
        with self._lock:
            self._entries[key] = (self._clock() + ttl_s, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


# Store the entry and note it in the index (scored by Redis' clock); past `max_entries`, drop
# the oldest entries written. KEYS: entry, index. ARGV: value, ttl ms, max entries.
_PUT = redis_client.Script("""
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], tonumber(t[1]) * 1000000 + tonumber(t[2]), KEYS[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #oldest, 2 do redis.call('DEL', oldest[i]) end
end
return over
""")
# Wider than redis_client.UNREACHABLE: whatever Redis answers, a cache is a miss, never an error.
_REDIS_ERRORS = (aioredis.RedisError, OSError)


class Shared:
    """A TTL cache in Redis shared by every process: JSON values, compressed, at most
    `max_entries` of them (the oldest written dropped first). Redis failing is a miss and a put
    not kept, never an error: the caller asks the provider instead."""

    def __init__(self, name: str, *, max_entries: int) -> None:
        self.index = redis_keys.cache_index(name)
        self.prefix = self.index + ":"
        self.max_entries = max_entries

    def _key(self, key: str) -> str:
        return self.prefix + hashlib.sha256(key.encode("utf-8")).hexdigest()

    async def get(self, client: aioredis.Redis, key: str) -> tuple[Any, float] | None:
        """(value, seconds it has left) of `key`, or None."""
        try:
            async with client.pipeline(transaction=False) as pipe:
                pipe.get(self._key(key))
                pipe.pttl(self._key(key))
                raw, left_ms = await pipe.execute()
        except _REDIS_ERRORS as exc:
            logger.warning("shared cache %s unreadable: %s", self.index, exc)
            return None
        if raw is None or left_ms <= 0:
            return None
        return json.loads(zlib.decompress(raw)), left_ms / 1000

    async def put(self, client: aioredis.Redis, key: str, value: Any, ttl_s: float) -> None:
        """Keep `value` for `ttl_s` seconds (0 keeps nothing)."""
        if ttl_s <= 0:
            return
        packed = zlib.compress(json.dumps(value, separators=(",", ":")).encode("utf-8"))
        ttl_ms = max(1, round(ttl_s * 1000))
        try:
            await _PUT(
                client, keys=[self._key(key), self.index], args=[packed, ttl_ms, self.max_entries]
            )
        except _REDIS_ERRORS as exc:
            logger.warning("shared cache %s not written: %s", self.index, exc)
