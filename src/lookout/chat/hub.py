"""One Redis reader per web process for every chat being listened to, fanned out in memory.

A blocking XREAD per SSE client would hold one Redis connection each (the client pool stops at
100): 200 listeners on one chat wedged the process. The hub reads all listened-to chats with a
single XREAD on a connection of its own and hands each event to every subscriber's queue.

A chat newly listened to must join the read at once. Cancelling the XREAD in flight to re-issue
it leaked: redis-py turned some of those cancellations into connection errors, the old reader
went on reading, and after a few hundred subscriptions 100 stale readers held the whole pool
(tests/reliability/test_faults_postgres.py saw turns fail for want of a connection). Instead the
reader is woken with CLIENT UNBLOCK, which ends its XREAD early as if it had timed out; the
XREAD is never cancelled, so its connection stays healthy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis

from lookout import errors, loops, parts, redis_client
from lookout.chat import events, stream_ids

logger = logging.getLogger(__name__)

Event = tuple[str, str, parts.Part]  # (stream id, turn id, part)
IDLE_S = 5.0
_RETRY_S = 1.0
# A wake-up that reaches Redis before the XREAD it targets finds nothing blocked: try again.
_WAKE_RETRY_S = 0.005


class Hub:
    """`redis` (the shared pool) serves catch-up reads and wake-ups; `listener` (one dedicated
    connection, see redis_client.listener) carries the blocking XREAD."""

    def __init__(self, redis: aioredis.Redis, listener: aioredis.Redis) -> None:
        self.redis = redis
        self.listener = listener
        self._queues: dict[uuid.UUID, set[asyncio.Queue[Event]]] = {}
        self._positions: dict[uuid.UUID, str] = {}
        self._reader: asyncio.Task[None] | None = None
        self._waker: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()  # set while any chat is listened to
        self._version = 0  # bumped when a chat joins
        self._reading = 0  # the version the XREAD in flight covers
        self._client_id: int | None = None  # the listener's connection, once known
        self._marked = 0.0  # when the listened chats' marks were last renewed
        self._closed = False

    @contextlib.asynccontextmanager
    async def subscribe(
        self, chat_id: uuid.UUID, after: str
    ) -> AsyncIterator[AsyncIterator[Event | None]]:
        """Events of the chat after `after` (catch-up, then live); None on each idle tick.
        InvalidInput, before anything is read, when `after` is not a stream id."""
        if stream_ids.parse(after) is None:
            raise errors.InvalidInput("Last-Event-ID is not an event id of this stream.")
        queue: asyncio.Queue[Event] = asyncio.Queue()
        first = chat_id not in self._queues
        position = await events.last_id(self.redis, chat_id) if first else ""
        if self._closed:  # the process is stopping: no new reader
            raise errors.Unavailable("The event hub is closed.")
        # No await from here to the queue's registration: a subscriber leaving meanwhile would
        # delete the chat this one is about to join.
        if chat_id not in self._queues:  # (again: a concurrent first subscriber may have set it up)
            self._positions[chat_id] = position
            self._queues[chat_id] = set()
            self._joined()
        self._queues[chat_id].add(queue)
        try:
            if first:
                # Its scheduled turns stream as they go from now on (renewed by the reader; it
                # expires when nobody reads the chat any more).
                await events.mark_listened(self.redis, [chat_id])
            yield self._iterate(chat_id, queue, after)
        finally:
            listeners = self._queues.get(chat_id, set())  # none once the hub is closed
            listeners.discard(queue)
            if not listeners and chat_id in self._queues:
                # The XREAD in flight may still name the chat; what it returns for it is dropped.
                del self._queues[chat_id], self._positions[chat_id]
                if not self._queues:
                    self._listening.clear()

    async def _iterate(
        self, chat_id: uuid.UUID, queue: asyncio.Queue[Event], after: str
    ) -> AsyncIterator[Event | None]:
        # Registered before the catch-up read: nothing falls between the two; ids dedupe.
        seen = stream_ids.key(after)
        for event in await events.range_after(self.redis, chat_id, after):
            seen = stream_ids.key(event[0])
            yield event
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=IDLE_S)
            except TimeoutError:
                yield None
                continue
            if stream_ids.key(event[0]) > seen:
                seen = stream_ids.key(event[0])
                yield event

    def _joined(self) -> None:
        """A chat joined: the reader must re-issue its XREAD with it."""
        self._version += 1
        self._listening.set()
        if self._reader is None:
            self._reader = asyncio.create_task(self._read())
        if self._waker is None or self._waker.done():
            self._waker = asyncio.create_task(self._wake())

    async def _wake(self) -> None:
        """Unblock the XREAD in flight until the reader has taken up every joined chat."""
        # Not once every listener has left: the reader then waits for a join, not for its XREAD,
        # and would never take up the version this loop waits for.
        while (
            not self._closed
            and self._listening.is_set()
            and self._reading < self._version
            and self._client_id is not None
        ):
            try:
                await self.redis.client_unblock(self._client_id)
            except redis_client.UNREACHABLE:
                return  # the reader meets the same outage and re-reads when it is over
            loops.raise_if_cancelling()
            await asyncio.sleep(_WAKE_RETRY_S)

    async def _read(self) -> None:
        """The process's one reader: lives as long as the hub; never ends on an error."""
        while not self._closed:
            await self._listening.wait()
            try:
                await self._read_once()
            except redis_client.UNREACHABLE as exc:
                loops.raise_if_cancelling()
                self._client_id = None  # a new connection has a new id
                logger.warning("event hub lost Redis (%s); retrying", type(exc).__name__)
                await asyncio.sleep(_RETRY_S)
            except Exception:
                loops.raise_if_cancelling()
                self._client_id = None
                logger.exception("event hub read failed; retrying")
                await asyncio.sleep(_RETRY_S)

    async def _read_once(self) -> None:
        if self._client_id is None:
            self._client_id = int(await self.listener.client_id())
        if time.monotonic() - self._marked >= IDLE_S and self._positions:
            self._marked = time.monotonic()
            with contextlib.suppress(errors.Unavailable):  # the XREAD meets the outage too
                await events.mark_listened(self.redis, list(self._positions))
        self._reading = self._version
        # Built after the awaits above: the last listener may have left meanwhile.
        streams: dict[Any, Any] = {events.stream_key(c): p for c, p in self._positions.items()}
        if not streams:
            return
        response: Any = await self.listener.xread(streams, block=int(IDLE_S * 1000), count=500)
        for key, entries in response or []:
            self._deliver(events.chat_of(key), entries)

    def _deliver(self, chat_id: uuid.UUID, entries: list[Any]) -> None:
        for raw_id, fields in entries:
            event = events.decode(raw_id, fields)
            position = self._positions.get(chat_id)
            # A chat that left and joined again may get entries its new position already covers
            if position is not None and stream_ids.key(event[0]) > stream_ids.key(position):
                self._positions[chat_id] = event[0]
            for queue in self._queues.get(chat_id, ()):
                queue.put_nowait(event)

    async def close(self) -> None:
        self._closed = True
        self._listening.set()  # a reader that missed its cancellation sees _closed and ends
        self._queues.clear()
        self._positions.clear()
        for task in (self._reader, self._waker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.listener.aclose()
