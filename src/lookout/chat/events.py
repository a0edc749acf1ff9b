"""The chat's event stream in Redis: every turn's parts, ids that double as SSE ids.

One stream per chat (bounded, expiring some time after the last turn) carries the parts of
every turn, interactive and scheduled; a small key points at the turn in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import redis.asyncio as aioredis

from lookout import errors, loops, parts, redis_client, redis_keys
from lookout.chat import stream_ids

logger = logging.getLogger(__name__)

MAXLEN = 5000
TTL_S = 24 * 3600
ACTIVE_TTL_S = 3600
STREAM_AWAY = "The event stream is unavailable; retry shortly."
# A turn's writes while Redis is away: tried again after these pauses (then every last one),
# for as long as the turn runs and DRAIN_WAIT_S after it; at most MAX_PENDING parts wait.
RETRY_S = (0.1, 0.2, 0.5, 1.0, 2.0)
DRAIN_WAIT_S = 20.0
MAX_PENDING = 10_000
# After drain's wait the rest is still tried this long, behind the turn (its listeners and the
# pointer to the turn in flight then see it end), and given up after.
LATE_WRITE_S = 600.0
_late_writers: set[asyncio.Task[None]] = set()


def stream_key(chat_id: uuid.UUID) -> str:
    return redis_keys.chat_events(chat_id)


def active_key(chat_id: uuid.UUID) -> str:
    return redis_keys.chat_active(chat_id)


def written_key(chat_id: uuid.UUID) -> str:
    return redis_keys.chat_written(chat_id)


def listened_key(chat_id: uuid.UUID) -> str:
    return redis_keys.chat_listened(chat_id)


# A chat a web process's hub reads is marked listened for this long, and the mark renewed while
# it is read (chat.hub): a scheduled turn of a chat nobody listens to is written in one batch.
LISTENED_TTL_S = 15


async def mark_listened(redis: aioredis.Redis, chat_ids: list[uuid.UUID]) -> None:
    with unavailable():
        async with redis.pipeline(transaction=False) as pipe:
            for chat_id in chat_ids:
                pipe.set(listened_key(chat_id), 1, ex=LISTENED_TTL_S)
            await pipe.execute()


async def listened(redis: aioredis.Redis, chat_id: uuid.UUID) -> bool:
    """Whether a web process is reading the chat's stream for a listener (one command)."""
    with unavailable():
        return bool(await redis.exists(listened_key(chat_id)))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def publish(
    redis: aioredis.Redis, chat_id: uuid.UUID, turn_id: uuid.UUID, part: parts.Part
) -> str:
    """Append a part; returns its id. The first part of a turn marks the turn in flight."""
    (entry_id,) = await publish_many(redis, chat_id, turn_id, [part])
    return entry_id


# Appends a batch of parts in order in one command: a `start` marks the turn in flight (the
# pointer names the start's own id, known only inside Redis), a finish or error clears the mark
# and lets the stream expire TTL_S after the turn. A numbered batch is written once: the number
# of the turn's last one is kept, and a batch sent again (its first try's answer was lost to an
# outage, not its write) adds nothing. ARGV: turn, maxlen, ttl, active ttl, batch number (0: not
# numbered), then a (kind, part json) pair a part. Returns the ids (none for a batch sent again).
_PUBLISH = redis_client.Script("""
if ARGV[5] ~= '0' then
  local numbered = ARGV[1] .. ' ' .. ARGV[5]
  if redis.call('GET', KEYS[3]) == numbered then
    return {}
  end
  redis.call('SET', KEYS[3], numbered, 'EX', ARGV[4])
end
local ids = {}
for i = 6, #ARGV, 2 do
  local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*',
                        'turn', ARGV[1], 'part', ARGV[i + 1])
  ids[#ids + 1] = id
  if ARGV[i] == 'start' then
    redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. id, 'EX', ARGV[4])
  elseif ARGV[i] == 'end' then
    redis.call('DEL', KEYS[2])
    redis.call('EXPIRE', KEYS[1], ARGV[3])
  end
end
return ids
""")


async def publish_many(
    redis: aioredis.Redis,
    chat_id: uuid.UUID,
    turn_id: uuid.UUID,
    batch: list[parts.Part],
    number: int = 0,
) -> list[str]:
    """Append parts in order, in one round trip (one script); their ids. A batch with a
    `number` (the turn's count of its batches) sent again is not written twice."""
    args: list[str | int] = [str(turn_id), MAXLEN, TTL_S, ACTIVE_TTL_S, number]
    for part in batch:
        kind = "end" if part["type"] in parts.TERMINAL else part["type"]
        args += [kind, json.dumps(part)]
    keys = [stream_key(chat_id), active_key(chat_id), written_key(chat_id)]
    with unavailable():
        added = await _PUBLISH(redis, keys=keys, args=args)
    return [_text(entry_id) for entry_id in added]


@contextlib.contextmanager
def unavailable() -> Iterator[None]:
    """Redis unreachable → Unavailable (503), not a 500 (a message posted while Redis restarted
    was answered 500: tests/reliability/test_faults_redis.py)."""
    try:
        yield
    except redis_client.UNREACHABLE as exc:
        raise errors.Unavailable(STREAM_AWAY) from exc


async def active_turn(redis: aioredis.Redis, chat_id: uuid.UUID) -> tuple[str, str] | None:
    """(turn id, id of its first event) of the turn in flight, if any."""
    with unavailable():
        raw = await redis.get(active_key(chat_id))
    if raw is None:
        return None
    turn, first = _text(raw).split(" ", 1)
    return turn, first


def decode(raw_id: Any, fields: dict[Any, Any]) -> tuple[str, str, parts.Part]:
    """(id, turn, part) of one stream entry."""
    decoded = {_text(key): _text(value) for key, value in fields.items()}
    return _text(raw_id), decoded["turn"], json.loads(decoded["part"])


def chat_of(key: Any) -> uuid.UUID:
    return uuid.UUID(_text(key).split(":")[2])


async def range_after(
    redis: aioredis.Redis, chat_id: uuid.UUID, after: str
) -> list[tuple[str, str, parts.Part]]:
    """Every stored event of the chat after `after` (exclusive); InvalidInput for an id Redis
    would refuse (checked before it is sent: see stream_ids)."""
    if stream_ids.parse(after) is None:
        raise errors.InvalidInput("Last-Event-ID is not an event id of this stream.")
    with unavailable():
        entries: Any = await redis.xrange(stream_key(chat_id), min=f"({after}", max="+")
    return [decode(raw_id, fields) for raw_id, fields in entries]


async def turn_events(
    source: AsyncIterator[tuple[str, str, parts.Part] | None],
    redis: aioredis.Redis,
    chat_id: uuid.UUID,
    turn_id: str,
) -> AsyncIterator[tuple[str, parts.Part]]:
    """The events of one turn from a chat's event source, ending with its finish/error part.

    A turn that vanished (its process died and the pointer expired or moved on) ends the read
    with an error part, so a client never hangs on a turn that will never finish.
    """
    async for event in source:
        if event is None:
            try:
                active = await active_turn(redis, chat_id)
            except errors.Unavailable as exc:  # the stream ends with a reason, not a cut socket
                yield "0-0", parts.error(exc.code, exc.message)
                return
            if active is None or active[0] != turn_id:
                yield "0-0", parts.error("turn_lost", "This answer was interrupted; ask again.")
                return
            continue
        entry_id, turn, part = event
        if turn != turn_id:
            continue
        yield entry_id, part
        if part["type"] in parts.TERMINAL:
            return


async def last_id(redis: aioredis.Redis, chat_id: uuid.UUID) -> str:
    """The id of the newest event of the chat ("0-0" when there is none)."""
    with unavailable():
        newest: Any = await redis.xrevrange(stream_key(chat_id), count=1)
    return _text(newest[0][0]) if newest else "0-0"


class Publisher:
    """One turn's parts onto its chat's stream, in order, coalesced: what the turn emits while
    a write is in flight goes out with the next write, in one round trip. A streamed answer
    (text-start, a delta every few words, text-end) costs one or two round trips, not one a
    part, and the turn does not wait on Redis between parts.

    With `linger_s`, a write first waits that long (or until `drain`) for more parts: a turn
    nobody is waiting on (a scheduled one) that ends within it is written in one round trip.
    With `batched` (a scheduled turn nobody listens to), writes wait for `drain` and a text's
    deltas go out as one: the whole turn is one script call, one stream entry a part.

    Redis away (Unavailable) does not stop the turn: the write is tried again with backoff, its
    parts still first in line, while the turn goes on, so an outage that ends before the turn
    (or within `drain`'s wait after it) loses no part. Whatever else fails a write is raised by
    the next `emit` or by `drain`; `drain` waits until everything emitted so far is written and
    raises when Redis stayed away through its wait (what is left is still tried behind the turn
    for LATE_WRITE_S; later emits are refused); `emit` raises once MAX_PENDING parts wait.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        chat_id: uuid.UUID,
        turn_id: uuid.UUID,
        *,
        linger_s: float = 0.0,
        batched: bool = False,
    ) -> None:
        self.redis = redis
        self.chat_id = chat_id
        self.turn_id = turn_id
        self._linger_s = linger_s
        self._batched = batched
        self._wake = asyncio.Event()  # a lingering write goes now (its time is up, or drain)
        self._drained = False
        self._pending: list[parts.Part] = []
        self._writer: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._away: errors.Unavailable | None = None  # the last write's outage, while retrying
        self._batches = 0  # numbers each write: a batch tried again is written once
        self._late_since: float | None = None  # when drain stopped waiting for the writes

    async def emit(self, part: parts.Part) -> None:
        if self._failure is not None:
            raise self._failure
        if self._away is not None and (self._late_since is not None
                                       or len(self._pending) >= MAX_PENDING):  # fmt: skip
            raise self._away
        self._pending.append(part)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())

    async def drain(self, wait_s: float = DRAIN_WAIT_S) -> None:
        self._drained = True
        self._wake.set()
        writer = self._writer
        if writer is not None and not writer.done():
            try:
                done, _ = await asyncio.wait({writer}, timeout=wait_s)
            except asyncio.CancelledError:
                self.close()
                raise
            if not done:  # Redis still away: the rest goes out if it is back within LATE_WRITE_S
                self._late_since = time.monotonic()
                _late_writers.add(writer)  # a task nobody holds may be collected
                writer.add_done_callback(_late_writers.discard)
                raise self._away or errors.Unavailable(STREAM_AWAY)
        if self._failure is not None:
            raise self._failure

    def close(self) -> None:
        """Stop writing (a write still being retried is given up)."""
        if self._writer is not None:
            self._writer.cancel()

    async def _write(self) -> None:
        if (self._linger_s or self._batched) and not self._drained:
            loop = asyncio.get_running_loop()
            timer = None if self._batched else loop.call_later(self._linger_s, self._wake.set)
            await self._wake.wait()
            if timer is not None:
                timer.cancel()
            self._wake.clear()
        else:
            await asyncio.sleep(0)  # the emitter's next parts at hand join this write
        tries, retry = 0, False
        while (retry or self._pending) and self._failure is None:
            if not retry:
                batch, self._pending = self._pending, []
                if self._batched:
                    batch = parts.joined_deltas(batch)
                self._batches += 1
            try:
                await publish_many(self.redis, self.chat_id, self.turn_id, batch, self._batches)
            except errors.Unavailable as exc:  # the same batch again shortly (written once)
                loops.raise_if_cancelling()
                if self._late_since and time.monotonic() - self._late_since > LATE_WRITE_S:
                    logger.warning("chat stream away for too long: %d parts not written",
                                   len(batch) + len(self._pending))  # fmt: skip
                    return
                retry = True
                if self._away is None:
                    logger.warning("chat stream away, retrying its writes: %s", exc.__cause__)
                self._away = exc
                await asyncio.sleep(RETRY_S[min(tries, len(RETRY_S) - 1)])
                tries += 1
                continue
            except Exception as exc:  # kept for the turn to raise: a writer task has no caller
                self._failure = exc
                return
            if self._away is not None:
                logger.info("chat stream back after %d retries", tries)
            self._away, tries, retry = None, 0, False
