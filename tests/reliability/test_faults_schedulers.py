"""Two schedulers over 500 every-minute watches: every fire gets exactly one run.

What runs, exactly:
1. Real processes: a worker on the `dispatch` queue only (2 processes x 2 threads; the 500 x N
   chat turns are left queued, their enqueued messages are counted instead) and, for each of
   5 rounds, TWO `lookout scheduler` processes started together. The scheduler ticks once at
   start-up, so each round is one tick sent twice, as two schedulers do every minute; between
   rounds the 500 watches are made due again (at a new time, so each round is a new fire).
   A round that spans a minute boundary also sees that minute's tick from both schedulers: the
   watches claimed in the round are due again then (every minute), so it is one more fire, held
   to the same rule (one run each).
2. Two processes running the dispatcher's transaction (`dispatch.claim_batch`) in a tight loop
   for 30 s while the test makes all 500 watches due again every half second: the contention of
   a minute of ticks many times over. A fire claimed by both would show as a claim that created
   no run (the unique key (automation_id, scheduled_for) swallowing the duplicate).
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis

from tests.reliability import faults_report, faults_stack
from tests.reliability.conftest import FaultStack

pytestmark = pytest.mark.slow

TITLE = "Two schedulers, 500 watches"
WHAT = (
    "5 rounds of two real `lookout scheduler` processes ticking at once over 500 due watches "
    "(one worker on the dispatch queue), then two processes running the dispatcher transaction "
    "in a tight loop for 30 s while all 500 watches come due again every 0.5 s. Tried: fires; "
    "held: fires with exactly one run, claimed once."
)

WATCHES = 500
ROUNDS = 5
LOOP_S = 30.0
REARM_EVERY_S = 0.5
REENQUEUE_AFTER_S = 60  # the dispatcher's sweep enqueues a run again once queued a minute


async def make_watches(stack: FaultStack, count: int) -> None:
    """`count` chats each watched every minute (straight in SQL: the service allows 50, every
    5 minutes at most)."""
    user_id, workspace_id, _ = await stack.tenant(credits=1_000_000)
    await stack.db.execute(
        """
        WITH chats AS (
            INSERT INTO chats (workspace_id, created_by, title)
            SELECT $1, $2, 'watch ' || n FROM generate_series(1, $3) AS n RETURNING id
        )
        INSERT INTO automations (workspace_id, created_by, trigger, action, next_run_at)
        SELECT $1, $2, '{"type": "schedule", "cron": "* * * * *", "timezone": "UTC"}',
               jsonb_build_object('type', 'chat_message', 'thread_id', id::text,
                                  'message', 'what is on https://example.com'),
               now() + interval '1 hour'
        FROM chats
        """,
        workspace_id, user_id, count,
    )  # fmt: skip


async def arm(db: asyncpg.Pool) -> dt.datetime:
    """Every watch due now, at one new time; returns it (the scheduled_for of this fire)."""
    due: dt.datetime = await db.fetchval(
        "WITH t AS (SELECT clock_timestamp() - interval '1 second' AS at) "
        "UPDATE automations SET next_run_at = t.at FROM t RETURNING t.at"
    )
    return due


async def one_round(
    stack: FaultStack, due: dt.datetime, redis: aioredis.Redis, worker: faults_stack.Proc
) -> list[list[dt.datetime]]:
    """Two schedulers tick at once; wait for the fire's runs and both ticks handled. Returns
    each scheduler's tick times."""
    pair = [stack.procs.lookout(f"scheduler-{n}", "scheduler") for n in "ab"]
    state: dict[str, Any] = {}
    try:

        async def done() -> bool:
            state["runs"] = await stack.db.fetchval(
                "SELECT count(*) FROM automation_runs WHERE scheduled_for = $1", due
            )
            state["ticks"] = [_ticks(p) for p in pair]
            state["dispatch_queued"] = await redis.llen("dramatiq:dispatch")
            ticked = all(ticks >= 1 for ticks in state["ticks"])
            return state["runs"] >= WATCHES and ticked and not state["dispatch_queued"]

        try:
            await faults_stack.until(done, 90, worker, every=0.25)
        except AssertionError as exc:  # say where the round stood, and what the processes said
            logs = "\n".join(f"--- {p.name}:\n{p.tail(1500)}" for p in [*pair, worker])
            raise AssertionError(f"{exc}; {state}\n{logs}") from None
        await asyncio.sleep(1.0)  # the second tick's (empty) dispatch finishes
    finally:
        for proc in pair:
            await asyncio.to_thread(proc.stop)
    return [_tick_times(p) for p in pair]


def _ticks(proc: faults_stack.Proc) -> int:
    return len(_tick_times(proc))


def _minute(at: dt.datetime) -> dt.datetime:
    return at.replace(second=0, microsecond=0)


def _tick_times(proc: faults_stack.Proc) -> list[dt.datetime]:
    """When each of the process's dispatch ticks was scheduled for, from the scheduler's log line
    ("Scheduling <actor> at <time>.")."""
    return [
        dt.datetime.fromisoformat(line.rsplit(" at ", 1)[1].rstrip("."))
        for line in proc.log.read_text(errors="replace").splitlines()
        if "Scheduling" in line and "dispatch_due_watches" in line
    ]


async def enqueued_per_run(redis: aioredis.Redis, runs: list[asyncpg.Record]) -> dict[Any, int]:
    """chat_message messages waiting per run, sent within a minute of its creation (a later
    one is the sweep's re-enqueue, by design)."""
    created = {str(r["id"]): r["created_at"].timestamp() for r in runs}
    counts: dict[Any, int] = collections.Counter()
    for raw in (await redis.hgetall("dramatiq:watches.msgs")).values():
        message = json.loads(raw)
        run_id = message["args"][0]
        if message["message_timestamp"] / 1000 - created.get(run_id, 0) < REENQUEUE_AFTER_S:
            counts[run_id] += 1
    return counts


@pytest.mark.timeout(300)
async def test_two_schedulers_never_run_a_fire_twice(fault_stack: FaultStack) -> None:
    stack = fault_stack
    await make_watches(stack, WATCHES)
    redis = aioredis.Redis.from_url(stack.settings.redis_url)
    try:
        real = await real_schedulers(stack, redis)
    finally:
        await redis.aclose()
    loop = await tight_loop(stack)
    figures = {"watches": WATCHES, **real, **loop}
    figures["tried"] = real["fires"] + loop["loop_fires"]
    figures["held"] = figures["tried"] - real["duplicate_runs"] - loop["double_claims"]
    faults_report.write("two-schedulers", figures, title=TITLE, what=WHAT)

    assert real["ticks_sent"] - real["minute_ticks"] == 2 * ROUNDS, figures
    assert real["fires_with_one_run"] == WATCHES * ROUNDS, figures
    assert real["duplicate_runs"] == 0 and real["runs_enqueued_twice"] == 0, figures
    assert real["runs_not_enqueued"] == 0, figures
    assert loop["double_claims"] == 0 and loop["runs_in_both"] == 0, figures
    assert loop["runs_reported"] == loop["runs_stored"] > WATCHES, figures


async def real_schedulers(stack: FaultStack, redis: aioredis.Redis) -> dict[str, Any]:
    # Given a worker and 500 watches; When 5 rounds of two schedulers tick at once
    worker = stack.procs.worker(processes=2, threads=2, queues=("dispatch",))

    async def ready() -> bool:
        return "Worker process is ready" in worker.log.read_text(errors="replace")

    # A tick that waits for a worker still starting grows old, and workers drop ticks older
    # than PERIODIQ_SKIP_DELAY_S: start the rounds once the worker consumes.
    await faults_stack.until(ready, 60, worker)
    started = time.monotonic()
    ticks: list[list[dt.datetime]] = []
    fires = []
    for _ in range(ROUNDS):
        due = await arm(stack.db)
        fires.append(due)
        ticks += await one_round(stack, due, redis, worker)
    elapsed = time.monotonic() - started
    await asyncio.to_thread(worker.stop)

    # Then every fire has exactly one run, and each run was enqueued once
    runs = await stack.db.fetch(
        "SELECT id, automation_id, scheduled_for, created_at FROM automation_runs"
    )
    watch_ids = [r["id"] for r in await stack.db.fetch("SELECT id FROM automations")]
    per_fire = collections.Counter((r["automation_id"], r["scheduled_for"]) for r in runs)
    enqueued = await enqueued_per_run(redis, runs)
    return {
        "rounds": ROUNDS,
        "schedulers": 2,
        "ticks_sent": sum(map(len, ticks)),
        # a scheduler's ticks after its start-up one: one a minute at most, in later minutes
        # (the scheduler stamps a tick it sends late a second or so past the minute)
        "minute_ticks": sum(
            len({_minute(at) for at in later} - {_minute(first)}) for first, *later in ticks
        ),
        "seconds": round(elapsed, 1),
        "fires": WATCHES * ROUNDS,
        "fires_with_one_run": sum(per_fire[(w, due)] == 1 for due in fires for w in watch_ids),
        "runs": len(runs),
        "dispatches_that_found_work": worker.log.read_text().count("watch run(s)"),
        "duplicate_runs": sum(n - 1 for n in per_fire.values()),
        "runs_enqueued_twice": sum(n > 1 for n in enqueued.values()),
        "runs_not_enqueued": sum(str(r["id"]) not in enqueued for r in runs),
    }  # fmt: skip


async def tight_loop(stack: FaultStack) -> dict[str, Any]:
    # Given the same watches, When two processes dispatch in a loop while they keep coming due
    await stack.db.execute("DELETE FROM automation_runs")
    outs = [Path(tempfile.mkstemp(prefix="lookout-dispatch-", suffix=".json")[1]) for _ in "ab"]
    command = [sys.executable, "-m", "tests.reliability.faults_dispatch_loop"]
    loops = [stack.procs.spawn("dispatch", [*command, stack.settings.database_url, str(LOOP_S),
                                            str(out)]) for out in outs]  # fmt: skip
    rearms = 0
    while any(proc.alive for proc in loops):
        await asyncio.sleep(REARM_EVERY_S)
        await arm(stack.db)
        rearms += 1
    results = [json.loads(out.read_text()) for out in outs]

    # Then no fire was claimed twice, and no run is in both processes' hands
    a, b = (set(r["run_ids"]) for r in results)
    stored = await stack.db.fetchval("SELECT count(*) FROM automation_runs")
    fires = sum(r["claimed"] for r in results)
    return {
        "loop_seconds": LOOP_S,
        "rearms": rearms,
        "loop_fires": fires,
        "batches": [r["batches"] for r in results],
        "runs_reported": len(a) + len(b),
        "runs_stored": stored,
        "runs_in_both": len(a & b),
        "double_claims": fires - len(a) - len(b),
    }
