"""Lookout under benchmark: bulk-seeded watches, real `lookout worker` processes, check cycles.

A cycle is what the scheduler does every minute, made to happen now: every watch is made due
(`next_run_at` in the past), the dispatcher records one run per watch and enqueues them, and the
cycle ends when every run is finished (its end is the last run's `finished_at`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import redis
import redis.asyncio as aioredis

from lookout import broker, cli, loops
from lookout.access import accounts
from lookout.access.services import Services
from lookout.actors import watches as watch_actors
from lookout.agent import graph
from lookout.capabilities import fetch
from lookout.db import checkpointer, migrate, pool, repo
from lookout.settings import Settings
from lookout.watches import dispatch, runner

PER_WORKSPACE = 50  # LOOKOUT_MAX_WATCHES' default: a real install spreads watches this thin
CREDITS = 10_000_000
CRON = "0 * * * *"

# Rows shaped as watches.service.create writes them; the bench inserts thousands in one go
# instead of 10,000 single-row transactions (the service is not what is measured here).
_CHATS = """
INSERT INTO chats (workspace_id, created_by, title)
SELECT w, $2, t FROM unnest($1::uuid[], $3::text[]) AS u(w, t)
RETURNING id, title
"""
_WATCHES = """
INSERT INTO automations (workspace_id, created_by, trigger, action, next_run_at, notify)
SELECT c.workspace_id, $1, jsonb_build_object('type', 'schedule', 'cron', $2::text,
       'timezone', 'UTC'), jsonb_build_object('type', 'chat_message', 'thread_id', c.id::text,
       'message', u.message), now() + interval '1 hour', '{"credits_per_month": 744}'
FROM unnest($3::uuid[], $4::text[]) AS u(chat_id, message) JOIN chats c ON c.id = u.chat_id
RETURNING id, (action ->> 'thread_id')::uuid AS chat_id
"""
_MAKE_DUE = """
UPDATE automations SET next_run_at = now() - interval '1 second'
WHERE enabled AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))
"""
_PENDING = "SELECT count(*) FROM automation_runs WHERE status IN ('queued', 'running')"
_PURGE = """
WITH dropped AS (
    UPDATE automation_runs SET status = 'skipped', error = 'bench: purged', finished_at = now()
    WHERE status = 'queued' RETURNING 1
) SELECT count(*) FROM dropped
"""
_LARGEST = """
SELECT relname, pg_total_relation_size(oid) AS size FROM pg_class
WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY size DESC LIMIT $1
"""
_COMMITS = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
_WORKSPACE = "SELECT workspace_id FROM automations WHERE id = $1"
_THREAD_BYTES = """
WITH t AS (SELECT action ->> 'thread_id' AS id FROM automations WHERE id = $1)
SELECT (SELECT coalesce(sum(length(blob)), 0) FROM checkpoint_blobs, t WHERE thread_id = t.id)
     + (SELECT coalesce(sum(pg_column_size(checkpoint)), 0) FROM checkpoints, t
        WHERE thread_id = t.id)
"""
_OUTCOMES = """
SELECT r.automation_id, r.status, r.error, m.parts, extract(epoch FROM r.finished_at) AS done
FROM automation_runs r LEFT JOIN chat_messages m ON m.run_id = r.id AND m.role = 'assistant'
WHERE r.id = ANY($1::uuid[])
"""


@dataclasses.dataclass(frozen=True)
class Dispatched:
    run_ids: list[uuid.UUID]
    total_s: float  # claims and sends, each batch sent while the next is claimed
    first_sent_s: float  # until the first batch was in Redis: when workers may start
    send_s: float  # summed time of the sends (in a thread, overlapping the claims)
    cpu_s: float  # this process's CPU while dispatching (the dispatcher's own cost)


@dataclasses.dataclass(frozen=True)
class Cycle:
    dispatched: Dispatched
    wall_s: float  # make due -> last run finished
    outcomes: dict[uuid.UUID, str]  # automation -> changed | unchanged | first | failed: ...


def env_for(dsn: str, redis_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "REDIS_URL": redis_url,
        "LOOKOUT_SECRET_KEY": "bench-secret",
        "LOOKOUT_PUBLIC_URL": "http://127.0.0.1",
        "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "1",  # the pages are served on loopback
        "TZ": "UTC",
    }


class Lookout:
    """One Lookout install on the given Postgres and Redis, driven from this process."""

    def __init__(self, dsn: str, redis_url: str) -> None:
        self.env = env_for(dsn, redis_url)
        self.settings = Settings.from_env(self.env)
        self.db: asyncpg.Pool
        self.watches: dict[uuid.UUID, int] = {}  # automation -> page number

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[Lookout]:
        await migrate.migrate(self.settings.database_url)
        broker.setup(self.settings)
        async with pool.pool_context(self.settings.database_url, max_size=4) as db:
            self.db = db
            yield self

    async def seed(self, urls: list[str]) -> list[uuid.UUID]:
        """One watch per URL ("what is on <url>", hourly), PER_WORKSPACE watches a workspace."""
        user = await accounts.create_user(
            self.db, email=f"bench-{time.time_ns()}@example.com", password="bench-password-1"
        )
        workspaces = []
        for start in range(0, len(urls), PER_WORKSPACE):
            workspace = await accounts.create_workspace(
                self.db, name=f"bench {start}", owner_id=user.id, credits=CREDITS
            )
            workspaces += [workspace.id] * min(PER_WORKSPACE, len(urls) - start)
        titles = [str(index) for index in range(len(urls))]
        chats = {
            int(r["title"]): r["id"]
            for r in await self.db.fetch(_CHATS, workspaces, user.id, titles)
        }
        rows = await self.db.fetch(
            _WATCHES, user.id, CRON, [chats[i] for i in range(len(urls))],
            [f"what is on {url}" for url in urls],
        )  # fmt: skip
        page_of_chat = {chat: index for index, chat in chats.items()}
        added = {row["id"]: page_of_chat[row["chat_id"]] for row in rows}
        self.watches.update(added)
        # The dispatcher runs here; in production it runs in a worker process, whose start-up
        # heap is frozen once open (loops.freeze_heap), so full collections skip it. Frozen
        # likewise: this process's modules, pools and the bookkeeping just made (a worker holds
        # none of that last). Unfrozen, a 10,000-watch dispatch here took one 148 ms full
        # collection of ~300,000 objects about every other time (none at 1,000 watches).
        loops.freeze_heap()
        return sorted(added, key=added.__getitem__)

    async def make_due(self, only: list[uuid.UUID] | None = None) -> None:
        """What a minute passing does: every watch (or `only` these) comes due."""
        await self.db.execute(_MAKE_DUE, only)

    async def dispatch(self) -> Dispatched:
        """What the every-minute `dispatch_due_watches` actor does (dispatch.dispatch)."""
        sends: list[tuple[float, float]] = []  # (started, ended) of each send

        def send(run_ids: list[uuid.UUID]) -> None:
            began = time.perf_counter()
            watch_actors.send_all(run_ids)
            sends.append((began, time.perf_counter()))

        cpu, started = time.process_time(), time.perf_counter()
        run_ids = await dispatch.dispatch(self.db, send)
        total = time.perf_counter() - started
        return Dispatched(
            run_ids, total, sends[0][1] - started if sends else total,
            sum(end - began for began, end in sends), time.process_time() - cpu,
        )  # fmt: skip

    async def cycle(self, only: list[uuid.UUID] | None = None, timeout_s: float = 3600) -> Cycle:
        """Make every watch (or `only` these) due, dispatch, wait for every run to finish.

        The end is when a 0.1 s poll first sees no run pending: the same rule as for
        changedetection.io's cycle, so neither side gains from how its end is observed.
        """
        started = time.perf_counter()
        await self.make_due(only)
        dispatched = await self.dispatch()
        await self.wait_idle(timeout_s)
        wall = time.perf_counter() - started
        return Cycle(dispatched, wall, (await self.outcomes(dispatched.run_ids))[0])

    async def pending(self) -> int:
        """Runs queued or running."""
        return int(await self.db.fetchval(_PENDING))

    async def wait_idle(self, timeout_s: float = 3600) -> None:
        deadline = time.monotonic() + timeout_s
        while await self.db.fetchval(_PENDING):
            if time.monotonic() > deadline:
                raise TimeoutError(f"runs still pending after {timeout_s:.0f} s")
            await asyncio.sleep(0.1)

    async def outcomes(self, run_ids: list[uuid.UUID]) -> tuple[dict[uuid.UUID, str], float]:
        """(what each run's answer said, when the last one finished) for these runs."""
        rows = await self.db.fetch(_OUTCOMES, run_ids)
        said = {row["automation_id"]: _verdict(row) for row in rows}
        return said, max((float(row["done"] or 0) for row in rows), default=0.0)

    async def purge(self) -> int:
        """Drop the runs still queued (and their messages); returns how many were dropped."""
        await asyncio.to_thread(broker.setup(self.settings).flush, "watches")
        dropped = await self.db.fetchval(_PURGE)
        await self.wait_idle()
        return int(dropped)

    @contextlib.asynccontextmanager
    async def in_process(self) -> AsyncIterator[tuple[Services, graph.Graph]]:
        """What a worker process opens, opened here: to run single turns without a queue."""
        settings = self.settings
        client = aioredis.Redis.from_url(settings.redis_url)
        async with (
            fetch.open_session(settings) as http,
            checkpointer.saver_context(settings.database_url) as saver,
        ):
            yield (
                Services(db=self.db, redis=client, http=http, settings=settings),
                graph.build(saver),
            )
        await client.aclose()

    async def run_now(
        self, opened: tuple[Services, graph.Graph], automation_id: uuid.UUID
    ) -> tuple[float, str]:
        """(seconds, status) of one manual run of a watch, executed as the worker would."""
        row = await self.db.fetchrow(_WORKSPACE, automation_id)
        run_id = await repo.insert_run(
            self.db, automation_id=automation_id, workspace_id=row["workspace_id"],
            scheduled_for=dt.datetime.now(dt.UTC), manual=True,
        )  # fmt: skip
        assert run_id is not None
        started = time.perf_counter()
        status = await runner.execute(*opened, run_id)
        return time.perf_counter() - started, status

    async def thread_bytes(self, automation_id: uuid.UUID) -> int:
        """Checkpoint bytes held for the chat of a watch (what a turn reads and rewrites)."""
        return int(await self.db.fetchval(_THREAD_BYTES, automation_id))

    async def counters(self) -> tuple[int, int]:
        """(Postgres transactions committed in this database, Redis commands processed)."""
        await asyncio.sleep(1.1)  # backends flush their statistics at most once a second
        await self.db.execute("SELECT pg_stat_clear_snapshot()")
        commits = await self.db.fetchval(_COMMITS)
        return int(commits), await asyncio.to_thread(_redis_commands, self.settings.redis_url)

    async def largest_tables(self, count: int = 4) -> list[tuple[str, int]]:
        """(table, bytes with its indexes and TOAST) of the largest tables."""
        rows = await self.db.fetch(_LARGEST, count)
        return [(row["relname"], int(row["size"])) for row in rows]

    async def database_bytes(self) -> int:
        return int(await self.db.fetchval("SELECT pg_database_size(current_database())"))

    async def service_pids(self) -> list[int]:
        """The postmaster (its backends are its children) and redis-server: both local here."""
        data_dir = await self.db.fetchval("SHOW data_directory")
        return await asyncio.to_thread(_service_pids, data_dir, self.settings.redis_url)


def _redis_commands(redis_url: str) -> int:
    client = redis.Redis.from_url(redis_url)
    count = int(client.info("stats")["total_commands_processed"])
    client.close()
    return count


def _service_pids(data_dir: str, redis_url: str) -> list[int]:
    pids = [int(Path(data_dir, "postmaster.pid").read_text().split()[0])]
    client = redis.Redis.from_url(redis_url)
    pids.append(int(client.info("server")["process_id"]))
    client.close()
    return pids


def _verdict(row: asyncpg.Record) -> str:
    if row["status"] != "succeeded":
        return f"failed: {row['status']} {row['error'] or ''}".strip()
    text = "".join(p.get("text", "") for p in row["parts"] or [] if p.get("type") == "text")
    if "Changed since" in text:
        return "changed"
    return "unchanged" if "No change since" in text else "first"


@contextlib.contextmanager
def workers(env: dict[str, str], ready_s: float = 60) -> Iterator[subprocess.Popen[bytes]]:
    """`lookout worker` with its default process and thread counts; stopped with SIGTERM."""
    log = Path(tempfile.mkstemp(prefix="lookout-bench-worker-", suffix=".log")[1])
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "lookout.cli", "worker"], env=env, stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            _wait_ready(process, log, cli.worker_size(Settings.from_env(env))[0], ready_s)
            yield process
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    log.unlink()


def _wait_ready(process: subprocess.Popen[bytes], log: Path, processes: int, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"lookout worker exited:\n{log.read_text()[-2000:]}")
        if log.read_text(errors="replace").count("Worker process is ready for action") >= processes:
            return
        time.sleep(0.1)
    raise RuntimeError(f"lookout worker not ready in {limit:.0f} s:\n{log.read_text()[-2000:]}")
