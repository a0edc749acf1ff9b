"""A process-wide pacer: at most one request per interval, however many callers ask at once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable


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
