"""The chat lease: one turn per chat across all processes, expiring so a crash never wedges it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator, Coroutine, Sequence
from typing import Any

import asyncpg

from lookout import errors, heartbeat
from lookout.db import repo

logger = logging.getLogger(__name__)

LEASE_S = 60.0
RELEASE_RETRY_S = 1.0


async def acquire(
    db: asyncpg.Pool, chat_id: uuid.UUID, *, message: repo.NewMessage | None = None
) -> uuid.UUID:
    """The lease token, or Busy (with Retry-After) when another turn holds the chat. `message`
    (the turn's opening one) is written with the lease, in the same statement."""
    token = uuid.uuid4()
    taken = await repo.acquire_chat_lease(
        db, chat_id=chat_id, token=token, lease_s=LEASE_S, message=message
    )
    if taken:
        return token
    until = await repo.chat_busy_until(db, chat_id=chat_id)
    wait = 1
    if until is not None:
        wait = max(1, math.ceil((until - dt.datetime.now(dt.UTC)).total_seconds()))
    raise errors.Busy(
        "This chat is still answering the previous message; wait for it to finish.",
        retry_after=min(wait, int(LEASE_S)),
    )


async def release(
    db: asyncpg.Pool,
    chat_id: uuid.UUID,
    token: uuid.UUID,
    *,
    message: repo.NewMessage | None = None,
    settles: Sequence[tuple[uuid.UUID, str, int]] = (),
    run_end: tuple[str, str | None] | None = None,
    checkpoint: repo.CheckpointWrite | None = None,
    run_changes: dict[str, Any] | None = None,
) -> None:
    """Free the chat, writing `message` (the turn's closing one), the `settles` of its verb
    calls, the end of its watch run and its LangGraph `checkpoint` (repo.release_chat_lease) in
    the same statement. While the database is unreachable, keep trying until the lease would
    have expired anyway: a turn cut by a Postgres restart left its chat busy for up to a minute
    after Postgres was back (tests/reliability/test_faults_postgres.py)."""
    deadline = time.monotonic() + LEASE_S
    while True:
        try:
            released = await repo.release_chat_lease(
                db, chat_id=chat_id, token=token, message=message, settles=settles,
                run_end=run_end, checkpoint=checkpoint, run_changes=run_changes,
            )  # fmt: skip
        except errors.Unavailable:
            if time.monotonic() + RELEASE_RETRY_S >= deadline:
                raise
            await asyncio.sleep(RELEASE_RETRY_S)
            continue
        if not released:
            logger.warning("chat lease was taken over before release", extra={"chat_id": chat_id})
        return


@dataclasses.dataclass
class Held:
    """The block's hold on a lease: set `closing` to write that message (with `settles`,
    `run_end` and `checkpoint`) with the release."""

    closing: repo.NewMessage | None = None
    settles: list[tuple[uuid.UUID, str, int]] = dataclasses.field(default_factory=list)
    run_end: tuple[str, str | None] | None = None
    checkpoint: repo.CheckpointWrite | None = None
    run_changes: dict[str, Any] | None = None  # what the turn's watch run found


@contextlib.asynccontextmanager
async def kept(db: asyncpg.Pool, chat_id: uuid.UUID, token: uuid.UUID) -> AsyncIterator[Held]:
    """Renew the lease while the block runs; release it after, whatever happens."""

    async def renew() -> None:
        await repo.renew_chat_lease(db, chat_id=chat_id, token=token, lease_s=LEASE_S)

    held = Held()
    try:
        async with heartbeat.beating(LEASE_S / 3, renew):
            yield held
    finally:
        closing = held if held.closing is not None else Held()
        await _to_the_end(release(
            db, chat_id, token, message=closing.closing, settles=closing.settles,
            run_end=closing.run_end, checkpoint=closing.checkpoint,
            run_changes=closing.run_changes,
        ))  # fmt: skip


async def _to_the_end(work: Coroutine[Any, Any, None]) -> None:
    """Await `work` to its end even when this task is cancelled meanwhile, then raise the
    cancellation: what a turn stores with its release (its answer) must be in before anything
    else is written for it. Shielded alone, the caller went on at once and its "interrupted"
    answer, under the same message id, could be stored first (the real one then dropped)."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.cancelled():  # the loop is closing: nothing left to wait for
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
