"""The dispatcher: claim due watches, record one run per fire, advance their schedule.

Safe to run twice at once (SKIP LOCKED + a unique run per fire) and after downtime (missed
fires coalesce: the next run is the first fire after now).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
import uuid
from collections.abc import Callable

import asyncpg

from lookout.db import repo
from lookout.ops import metrics
from lookout.watches import schedule

logger = logging.getLogger(__name__)

Send = Callable[[list[uuid.UUID]], None]  # enqueue these runs (blocking)

BATCH = 1000
# A run queued longer than this is dropped rather than run hours late after an outage.
QUEUED_EXPIRY = dt.timedelta(minutes=30)


async def claim_batch(db: asyncpg.Pool, now: dt.datetime) -> tuple[list[uuid.UUID], int]:
    """(new run ids, automations claimed) for one batch, in one transaction.

    Each watch moves to its first fire after `now` and after the fire just claimed: `now` is
    read before the transaction, so a batch that straddles a fire (`now` just before it, the
    claim just after) would otherwise set the watch back to that fire and the next batch would
    claim it again (200 such claims, stopped only by the unique run key, in one run of
    tests/reliability/test_faults_schedulers.py)."""
    next_fire = functools.cache(schedule.next_fire)
    async with repo.transaction(db) as conn:
        due = await repo.claim_due_automations(conn, limit=BATCH)
        if not due:
            return [], 0
        ids = [row["id"] for row in due]
        metrics.observe_dispatch_lag(now, [row["next_run_at"] for row in due])
        run_ids = await repo.insert_runs_batch(
            conn,
            automation_ids=ids,
            workspace_ids=[row["workspace_id"] for row in due],
            scheduled_for=[row["next_run_at"] for row in due],
        )
        nexts = [
            next_fire(row["trigger"]["cron"], row["trigger"].get("timezone", "UTC"),
                      max(now, row["next_run_at"]))
            for row in due
        ]  # fmt: skip
        await repo.advance_automations(conn, automation_ids=ids, next_run_at=nexts)
    return run_ids, len(due)


async def dispatch_due(db: asyncpg.Pool, send: Send | None = None) -> list[uuid.UUID]:
    """Every due fire recorded as a run; returns the runs.

    With `send` (a blocking enqueue, run in a thread), each batch is sent as soon as it is
    committed, while the next one is claimed: workers start on the first batch instead of after
    the last, and a claim that fails half way leaves the batches before it sent. 10,000 due
    watches, no worker running: 0.89-1.24 s claimed, then sent; 0.64-0.98 s overlapped."""
    run_ids: list[uuid.UUID] = []
    sending: asyncio.Future[None] | None = None
    try:
        while True:
            batch, claimed = await claim_batch(db, dt.datetime.now(dt.UTC))
            run_ids += batch
            if send is not None and batch:
                if sending is not None:
                    await sending  # one batch in flight: runs are sent in the order claimed
                sending = asyncio.ensure_future(asyncio.to_thread(send, batch))
            if claimed < BATCH:
                break
    finally:
        if sending is not None:
            await sending
    if run_ids:
        logger.info("dispatched %d watch run(s)", len(run_ids))
    return run_ids


async def dispatch(db: asyncpg.Pool, send: Send) -> list[uuid.UUID]:
    """What the every-minute dispatcher does: every due fire recorded and sent, then the runs
    lost on their way (stuck_runs) sent again; returns every run sent."""
    run_ids = await dispatch_due(db, send)
    requeue = await stuck_runs(db)
    if requeue:
        await asyncio.to_thread(send, requeue)
    return run_ids + requeue


async def stuck_runs(db: asyncpg.Pool) -> list[uuid.UUID]:
    """Runs to enqueue again (queued but lost); fails runs whose worker died or that expired."""
    requeue: list[uuid.UUID] = []
    now = dt.datetime.now(dt.UTC)
    for row in await repo.list_stuck_runs(db):
        if row["status"] == "running":
            await repo.fail_stuck_run(
                db, run_id=row["id"], error="The worker running this check stopped."
            )
        elif now - row["created_at"] > QUEUED_EXPIRY:
            await repo.expire_queued_run(db, run_id=row["id"])
        else:
            requeue.append(row["id"])
    return requeue
