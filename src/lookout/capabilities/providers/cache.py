"""A small in-process TTL cache: bounded in entries, the least recently used evicted first.

In-process on purpose: what it saves is requests to a rate-limited public service, and each
process is paced on its own anyway. Several processes each keep their own copy.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

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
