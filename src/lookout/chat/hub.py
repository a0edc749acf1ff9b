"""One Redis reader per web process for every chat being listened to, fanned out in memory.

A blocking XREAD per SSE client would hold one Redis connection each (the client pool stops at
100): 200 listeners on one chat wedged the process. The hub reads all listened-to chats with a
single XREAD and hands each event to every subscriber's queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis

from lookout.chat import events, parts

logger = logging.getLogger(__name__)

Event = tuple[str, str, parts.Part]  # (stream id, turn id, part)
IDLE_S = 5.0
_RETRY_S = 1.0


def id_key(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq or 0)


class Hub:
    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._queues: dict[uuid.UUID, set[asyncio.Queue[Event]]] = {}
        self._positions: dict[uuid.UUID, str] = {}
        self._reader: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def subscribe(
        self, chat_id: uuid.UUID, after: str
    ) -> AsyncIterator[AsyncIterator[Event | None]]:
        """Events of the chat after `after` (catch-up, then live); None on each idle tick."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        if chat_id not in self._queues:
            position = await events.last_id(self.redis, chat_id)
            # Checked again after the await: a concurrent first subscriber may have set it up.
            if chat_id not in self._queues:
                self._positions[chat_id] = position
                self._queues[chat_id] = set()
                self._restart()
        self._queues[chat_id].add(queue)
        try:
            yield self._iterate(chat_id, queue, after)
        finally:
            self._queues[chat_id].discard(queue)
            if not self._queues[chat_id]:
                del self._queues[chat_id], self._positions[chat_id]
                self._restart()

    async def _iterate(
        self, chat_id: uuid.UUID, queue: asyncio.Queue[Event], after: str
    ) -> AsyncIterator[Event | None]:
        # Registered before the catch-up read: nothing falls between the two; ids dedupe.
        seen = id_key(after)
        for event in await events.range_after(self.redis, chat_id, after):
            seen = id_key(event[0])
            yield event
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=IDLE_S)
            except TimeoutError:
                yield None
                continue
            if id_key(event[0]) > seen:
                seen = id_key(event[0])
                yield event

    def _restart(self) -> None:
        """Re-issue the XREAD with the current set of chats (cancelling the one in flight)."""
        if self._reader is not None:
            self._reader.cancel()
        self._reader = asyncio.create_task(self._read()) if self._queues else None

    async def _read(self) -> None:
        while self._queues:
            streams: dict[Any, Any] = {events.stream_key(c): p for c, p in self._positions.items()}
            try:
                response: Any = await self.redis.xread(streams, block=int(IDLE_S * 1000), count=500)
            except (aioredis.ConnectionError, aioredis.TimeoutError, OSError) as exc:
                logger.warning("event hub lost Redis (%s); retrying", type(exc).__name__)
                await asyncio.sleep(_RETRY_S)
                continue
            for key, entries in response or []:
                self._deliver(events.chat_of(key), entries)

    def _deliver(self, chat_id: uuid.UUID, entries: list[Any]) -> None:
        for raw_id, fields in entries:
            event = events.decode(raw_id, fields)
            if chat_id in self._positions:
                self._positions[chat_id] = event[0]
            for queue in self._queues.get(chat_id, ()):
                queue.put_nowait(event)

    async def close(self) -> None:
        self._queues.clear()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
