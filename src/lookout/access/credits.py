"""Credits: reserve the worst case before work, settle the actual after, refund on failure.

Every step is idempotent per (workspace, request id), and the balance can never go negative.

Closes (settles and refunds) of one workspace asked while the process is writing one go into the
next statement together (`_Closer`): one round trip and one commit for all of them instead of
one each. A close asked when none is being written is written at once (alone, as before, unless
others were asked in the same turn of the event loop); each caller still gets its own answer
before it returns, so nothing is reported charged before it is written.
Measured with bench/door.py (16 concurrent calls of one API key, same machine, same hour): the
door's own CPU a call went from 1.10 ms (one statement a close) to 0.85-0.99 ms in single runs and
0.91 ms as the median of 3 rounds; closes went 1 to 14 a statement, ~4 on average. Alone a close
takes 0.16 ms of wall time, in a statement of 4 0.06 ms each.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access import keys
from lookout.db import repo

logger = logging.getLogger(__name__)

STALE_BATCH = 500
STALE_MARGIN = dt.timedelta(minutes=10)


async def reserve(
    db: asyncpg.Pool,
    *,
    workspace_id: uuid.UUID,
    request_id: str,
    amount: int,
    verb: str,
    actor: str,
    hold_s: float,
    key_id: uuid.UUID | None = None,
) -> None:
    """Take `amount` credits under ledger key `request_id`, or raise (nothing taken): the
    call must not run. InsufficientCredits; with API key `key_id`, Unauthenticated or Forbidden
    when the key may not spend now; Conflict when this ledger key had already reserved."""
    deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=hold_s)
    try:
        balance = await repo.reserve_credits(
            db,
            workspace_id=workspace_id,
            request_id=request_id,
            amount=amount,
            verb=verb,
            actor=actor,
            deadline=deadline,
            key_id=key_id,
        )
    except errors.InsufficientCredits:
        balance = await repo.get_balance(db, workspace_id=workspace_id)
        raise errors.InsufficientCredits(
            f"{verb} needs up to {amount} credit(s) and this workspace has {balance}; "
            "ask the workspace owner to add credits.",
            balance=balance,
            price=amount,
        ) from None
    if balance is None:
        raise await _refusal(db, workspace_id=workspace_id, key_id=key_id)


async def _refusal(
    db: asyncpg.Pool, *, workspace_id: uuid.UUID, key_id: uuid.UUID | None
) -> errors.LookoutError:
    """Why reserve_credits took nothing: the API key's standing, else a ledger key seen before."""
    if key_id is not None:
        standing = await repo.get_key_standing(db, key_id=key_id, workspace_id=workspace_id)
        refused = keys.refusal(standing)
        if refused is not None:
            return refused
    logger.error("a ledger key reserved twice; the call was not run")
    return errors.Conflict("This call was already charged once; nothing was run. Try again.")


@dataclasses.dataclass(frozen=True)
class Settlement:
    """A settle to be written later, with another statement (a chat turn's, at its end)."""

    workspace_id: uuid.UUID
    request_id: str
    charged: int


async def settle(
    db: asyncpg.Pool, *, workspace_id: uuid.UUID, request_id: str, reserved: int, charged: int
) -> int:
    """Charge `charged` (capped at the reservation), return the rest; the final charge."""
    returned = await _close(
        db, workspace_id=workspace_id, request_id=request_id, kind="settle", charged=charged
    )
    if returned is not None:
        return reserved - returned
    # Already closed by an earlier attempt: report what that one charged.
    final = await repo.get_charge(db, workspace_id=workspace_id, request_id=request_id)
    return final if final is not None else 0


async def refund(db: asyncpg.Pool, *, workspace_id: uuid.UUID, request_id: str) -> None:
    """Return the whole reservation (a failure is free); a no-op once settled or refunded."""
    await _close(db, workspace_id=workspace_id, request_id=request_id, kind="refund", charged=0)


@dataclasses.dataclass(frozen=True)
class _Close:
    request_id: str
    kind: str
    charged: int
    # What close_reservation returns for it, or _ALONE: its caller writes it alone.
    answer: asyncio.Future[object]


_ALONE = object()


class _Closer:
    """The closes of one workspace's reservations asked while this process writes one: its task
    writes those asked so far (in the same turn of the event loop: often only the first), then
    all those asked meanwhile in one statement, and so on until none is left; then it is gone.
    Per workspace, so a statement locks at most one balance row (two processes' statements
    never wait on each other's rows in opposite orders)."""

    def __init__(self, db: asyncpg.Pool, key: tuple[asyncio.AbstractEventLoop, uuid.UUID]) -> None:
        self.db, self.key, self.workspace_id = db, key, key[1]
        self.asked: list[_Close] = []
        self.task: asyncio.Task[None] | None = None

    async def write_all(self) -> None:
        batch: list[_Close] = []
        try:
            while self.asked:
                batch, self.asked = self.asked, []
                await self._write(batch)
        finally:
            if _closers.get(self.key) is self:
                del _closers[self.key]
            for close in [*batch, *self.asked]:  # cancelled (its loop is closing)
                if not close.answer.done():
                    close.answer.set_result(_ALONE)

    async def _write(self, batch: list[_Close]) -> None:
        if len(batch) == 1:
            close = batch[0]
            try:
                returned = await repo.close_reservation(
                    self.db, workspace_id=self.workspace_id, request_id=close.request_id,
                    kind=close.kind, charged=close.charged,
                )  # fmt: skip
            except Exception as exc:
                close.answer.set_exception(exc)
            else:
                close.answer.set_result(returned)
            return
        try:
            written = await repo.close_reservations(
                self.db,
                workspace_id=self.workspace_id,
                closes=[(close.request_id, close.kind, close.charged) for close in batch],
            )
        except Exception:  # each caller writes its own again, and gets its own error
            answers: list[object] = [_ALONE] * len(batch)
        else:
            found: dict[tuple[str, str], list[int]] = {}
            for request_id, kind, returned in written:
                found.setdefault((request_id, kind), []).append(returned)
            # One row per close written: a key asked twice has one, for the first asked.
            answers = [
                got.pop() if (got := found.get((close.request_id, close.kind))) else None
                for close in batch
            ]
        for close, answer in zip(batch, answers, strict=True):
            close.answer.set_result(answer)


# By event loop too: `lookout dev-serve` runs its worker on a loop of its own, in another thread.
_closers: dict[tuple[asyncio.AbstractEventLoop, uuid.UUID], _Closer] = {}


async def _close(
    db: asyncpg.Pool, *, workspace_id: uuid.UUID, request_id: str, kind: str, charged: int
) -> int | None:
    """repo.close_reservation, written with the other closes of the workspace asked while this
    process writes one (see _Closer)."""
    loop = asyncio.get_running_loop()
    key = (loop, workspace_id)
    closer = _closers.get(key)
    if closer is not None and (closer.task is None or closer.task.done()):
        closer = None  # its loop was closed before it ended (a test's loop)
    if closer is not None and closer.db is not db:  # another pool (tests open several)
        return await repo.close_reservation(
            db, workspace_id=workspace_id, request_id=request_id, kind=kind, charged=charged
        )
    if closer is None:
        closer = _closers[key] = _Closer(db, key)
        closer.task = asyncio.create_task(closer.write_all())
    close = _Close(request_id, kind, charged, loop.create_future())
    closer.asked.append(close)
    answer = await asyncio.shield(close.answer)
    if answer is _ALONE:
        return await repo.close_reservation(
            db, workspace_id=workspace_id, request_id=request_id, kind=kind, charged=charged
        )
    assert answer is None or isinstance(answer, int)
    return answer


@dataclasses.dataclass
class StaleSweep:
    """A process's place in the stale-reservation sweep: every reservation with a deadline before
    `mark` was closed when a pass last looked. Reservations are never deleted: without a mark,
    every pass would read every reservation ever made."""

    mark: dt.datetime = repo.NEVER


async def release_stale(db: asyncpg.Pool, sweep: StaleSweep | None = None) -> int:
    """Refund reservations whose deadline passed with nothing closing them (a crashed process).

    With `sweep`, the pass reads deadlines from its mark on and moves it: after refunding all it
    found, to STALE_MARGIN before the pass began (deadlines are written from other processes'
    clocks: that is the skew allowed); after a full batch, to the deadline it stopped at.
    """
    sweep = sweep or StaleSweep()
    started = dt.datetime.now(dt.UTC)
    stale = await repo.list_stale_reservations(db, limit=STALE_BATCH, since=sweep.mark)
    for workspace_id, request_id, _ in stale:
        await refund(db, workspace_id=workspace_id, request_id=request_id)
    if stale:
        logger.warning("refunded %d stale reservation(s)", len(stale))
    reached = stale[-1][2] if len(stale) == STALE_BATCH else started - STALE_MARGIN
    sweep.mark = max(sweep.mark, reached)
    return len(stale)


async def usage(db: asyncpg.Pool, *, workspace_id: uuid.UUID, days: int = 30) -> dict[str, Any]:
    balance = await repo.get_balance(db, workspace_id=workspace_id)
    ledger = await repo.recent_ledger(db, workspace_id=workspace_id, limit=50)
    per_verb = await repo.usage_by_verb(db, workspace_id=workspace_id, days=days)
    return {
        "balance": balance,
        "period_days": days,
        "verbs": [{"verb": u.verb, "calls": u.calls, "credits": u.credits} for u in per_verb],
        "ledger": [
            {
                "request_id": e.request_id,
                "call_id": e.request_id,  # the ledger key: a verb call's meta.call_id
                "kind": e.kind,
                "amount": e.amount,
                "verb": e.verb,
                "created_at": e.created_at.isoformat(),
            }
            for e in ledger
        ],
    }
