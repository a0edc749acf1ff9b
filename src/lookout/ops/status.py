"""Is Lookout keeping up? Watches due and overdue, runs, stuck runs, jobs and the Redis queues.

`snapshot` reads Postgres and Redis once; `problems` judges it against a lateness threshold.
`lookout admin status` prints it (exit 1 when something is late: a cron health check), and
/metrics exports the same numbers as gauges.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any

import asyncpg
import dramatiq
import redis.asyncio as aioredis

from lookout.db import repo
from lookout.settings import Settings

NAMESPACE = "dramatiq"  # the RedisBroker's default key prefix
STUCK_LISTED = 20


@dataclasses.dataclass(frozen=True)
class Queue:
    """One Dramatiq queue in Redis: ready, delayed (retries, eta) and dead-lettered messages."""

    name: str
    ready: int
    delayed: int
    dead: int
    oldest_age_s: float | None  # age of the message at the head of the ready list


@dataclasses.dataclass(frozen=True)
class Status:
    watches: repo.WatchesDue
    runs_last_hour: dict[str, int]
    stuck_runs: list[repo.StuckRun]
    jobs: dict[str, int]
    queues: list[Queue]

    def problems(self, max_overdue_s: float) -> list[str]:
        """What an operator must look at; empty when everything is on time."""
        found: list[str] = []
        if self.watches.overdue:
            found.append(
                f"{self.watches.overdue} watch(es) overdue by more than {max_overdue_s:.0f} s "
                "(is the scheduler running?)"
            )
        late_runs = [run for run in self.stuck_runs if run.past_lease_s > max_overdue_s]
        if late_runs:
            found.append(
                f"{len(late_runs)} run(s) stuck more than {max_overdue_s:.0f} s past their lease "
                "(their worker died and the dispatcher has not swept them)"
            )
        for queue in self.queues:
            if queue.oldest_age_s is not None and queue.oldest_age_s > max_overdue_s:
                found.append(
                    f"queue {queue.name}: oldest message waited {queue.oldest_age_s:.0f} s "
                    "(are the workers running?)"
                )
        return found


async def snapshot(
    db: asyncpg.Pool, redis: aioredis.Redis, queues: list[str], *, max_overdue_s: float
) -> Status:
    watches, runs, stuck, jobs, depths = await asyncio.gather(
        repo.status_watches(db, overdue_s=max_overdue_s),
        repo.status_runs_last_hour(db),
        repo.status_stuck_runs(db, limit=STUCK_LISTED),
        repo.status_jobs(db),
        queue_depths(redis, queues),
    )
    return Status(watches, runs, stuck, jobs, depths)


async def queue_depths(redis: aioredis.Redis, names: list[str]) -> list[Queue]:
    return [await _queue(redis, name) for name in sorted(names)]


async def _queue(redis: aioredis.Redis, name: str) -> Queue:
    key = f"{NAMESPACE}:{name}"
    async with redis.pipeline(transaction=False) as pipe:
        pipe.llen(key)
        pipe.llen(f"{key}.DQ")
        pipe.zcard(f"{key}.XQ")
        pipe.lindex(key, 0)
        ready, delayed, dead, head = await pipe.execute()
    oldest = None
    if head is not None:
        raw: Any = await redis.hget(f"{key}.msgs", head)
        oldest = _age_s(raw)
    return Queue(name, int(ready), int(delayed), int(dead), oldest)


def _age_s(raw: Any) -> float | None:
    """Seconds since a queued message was first enqueued (its Dramatiq timestamp)."""
    if raw is None:
        return None
    try:
        stamp = float(json.loads(raw)["message_timestamp"])
    except (ValueError, KeyError, TypeError):
        return None
    return max(0.0, time.time() - stamp / 1000)


def as_dict(status: Status, max_overdue_s: float) -> dict[str, Any]:
    return {
        "ok": not status.problems(max_overdue_s),
        "problems": status.problems(max_overdue_s),
        "watches": dataclasses.asdict(status.watches),
        "runs_last_hour": status.runs_last_hour,
        "stuck_runs": [_stuck_view(run) for run in status.stuck_runs],
        "jobs": status.jobs,
        "queues": [dataclasses.asdict(queue) for queue in status.queues],
    }


def _stuck_view(run: repo.StuckRun) -> dict[str, Any]:
    return {
        "id": str(run.id),
        "automation_id": str(run.automation_id),
        "attempts": run.attempts,
        "past_lease_s": round(run.past_lease_s, 1),
    }


def render(status: Status, max_overdue_s: float) -> str:
    """The report a person reads in a terminal."""
    watches = status.watches
    oldest = f", oldest due {watches.oldest_due_s:.0f} s ago" if watches.oldest_due_s else ""
    lines = [
        f"watches: {watches.due} due, {watches.overdue} overdue (> {max_overdue_s:.0f} s){oldest}",
        f"runs (last hour): {_counts(status.runs_last_hour)}",
        f"stuck runs (running past their lease): {len(status.stuck_runs)}",
        *(
            f"  run {run.id} of watch {run.automation_id}: {run.past_lease_s:.0f} s past lease"
            for run in status.stuck_runs
        ),
        f"jobs (active, and finished in the last hour): {_counts(status.jobs)}",
        "queues:",
        *(_queue_line(queue) for queue in status.queues),
    ]
    problems = status.problems(max_overdue_s)
    lines.append("PROBLEMS:" if problems else "ok: nothing is late")
    lines.extend(f"  - {problem}" for problem in problems)
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{status} {count}" for status, count in sorted(counts.items())) or "none"


def _queue_line(queue: Queue) -> str:
    age = "-" if queue.oldest_age_s is None else f"{queue.oldest_age_s:.0f} s"
    return (
        f"  {queue.name}: {queue.ready} ready, {queue.delayed} delayed, {queue.dead} dead, "
        f"oldest {age}"
    )


def queue_names(broker: dramatiq.Broker) -> list[str]:
    """The broker's queues, without their delay-queue twins."""
    return sorted(name for name in broker.get_declared_queues() if not name.endswith(".DQ"))


async def report(
    db: asyncpg.Pool,
    settings: Settings,
    queues: list[str],
    *,
    max_overdue_s: float,
    as_json: bool = False,
) -> int:
    """Print the status; 0 when nothing is late, 1 otherwise (`lookout admin status`)."""
    redis = aioredis.Redis.from_url(settings.redis_url, socket_connect_timeout=2)
    try:
        status = await snapshot(db, redis, queues, max_overdue_s=max_overdue_s)
    finally:
        await redis.aclose()
    if as_json:
        print(json.dumps(as_dict(status, max_overdue_s), indent=2))
    else:
        print(render(status, max_overdue_s))
    return 1 if status.problems(max_overdue_s) else 0


async def ping_database(db: asyncpg.Pool) -> None:
    """Postgres answers (readiness, and the metrics' `lookout_postgres_up`)."""
    await repo.ping(db)
