from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from lookout.db import migrate, queries


@pytest.fixture
async def empty_database(backing: tuple[str, str]) -> AsyncIterator[str]:
    server = backing[0]
    name = f"empty_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(f"{server}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{server}/{name}"
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


async def _tables(dsn: str) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await conn.close()
    return {row["tablename"] for row in rows}


async def test_all_migrations_apply_to_an_empty_database(empty_database: str) -> None:
    applied = await migrate.migrate(empty_database)

    assert applied == [name for name, _ in migrate.load(migrate.migrations_dir())]
    tables = await _tables(empty_database)
    expected = {
        "users", "workspaces", "memberships", "sessions", "api_keys", "credit_balances",
        "credit_ledger", "chats", "chat_messages", "automations", "automation_runs", "jobs",
        "mcp_connectors", "schema_migrations",
    }  # fmt: skip
    assert expected <= tables
    assert {"checkpoints", "checkpoint_blobs", "checkpoint_writes"} <= tables


async def test_rerunning_migrate_is_a_no_op(empty_database: str) -> None:
    await migrate.migrate(empty_database)
    before = await _tables(empty_database)

    assert await migrate.migrate(empty_database) == []
    assert await _tables(empty_database) == before


def _run_migrate(dsn: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "REDIS_URL": "redis://unused",
        "LOOKOUT_SECRET_KEY": "k",
    }
    return subprocess.run(
        [sys.executable, "-m", "lookout.cli", "migrate"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


async def test_two_concurrent_migrate_commands_both_succeed(empty_database: str) -> None:
    first, second = await asyncio.gather(
        asyncio.to_thread(_run_migrate, empty_database),
        asyncio.to_thread(_run_migrate, empty_database),
    )

    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    outputs = sorted([first.stdout, second.stdout])
    assert outputs[0].startswith("applied 0 migration(s)")
    assert "0001_initial.sql" in outputs[1]


async def test_balance_can_never_go_negative(db: asyncpg.Pool) -> None:
    user = await db.fetchval(
        "INSERT INTO users (email, password_hash) VALUES ('a@b.c', 'x') RETURNING id"
    )
    ws = await db.fetchval(
        "INSERT INTO workspaces (name, owner_id) VALUES ('w', $1) RETURNING id", user
    )
    await db.execute("INSERT INTO credit_balances (workspace_id, balance) VALUES ($1, 3)", ws)

    with pytest.raises(asyncpg.CheckViolationError):
        await db.execute(
            "UPDATE credit_balances SET balance = balance - 4 WHERE workspace_id = $1", ws
        )


# Statistics taken when no run or job was in flight and no credits were reserved yet (an install
# that just started: autovacuum analyzed it small), then thousands of each: the planner read a
# whole partial index to find one row (0004_in_flight_by_id.sql).
_SETTLED = """
WITH u AS (INSERT INTO users (email, password_hash) VALUES ('plans@example.com', 'x')
           RETURNING id),
     w AS (INSERT INTO workspaces (name, owner_id) SELECT 'w', id FROM u RETURNING id),
     b AS (INSERT INTO credit_balances (workspace_id, balance) SELECT id, 100000 FROM w),
     g AS (INSERT INTO credit_ledger (workspace_id, request_id, kind, amount)
           SELECT id, 'grant', 'grant', 100000 FROM w),
     a AS (INSERT INTO automations (workspace_id, created_by, trigger, action, next_run_at)
           SELECT w.id, u.id, '{}', '{}', now() FROM w, u RETURNING id, workspace_id),
     runs AS (INSERT INTO automation_runs (automation_id, workspace_id, scheduled_for, status)
              SELECT a.id, a.workspace_id, now() - make_interval(mins => n), 'succeeded'
              FROM a, generate_series(1, 100) AS n),
     jobs AS (INSERT INTO jobs (workspace_id, request_id, verb, input, principal, door,
                                expires_at, status)
              SELECT w.id, 'done-' || n, 'web.scrape', '{}', '{}', 'rest', now(), 'succeeded'
              FROM w, generate_series(1, 100) AS n)
SELECT w.id AS workspace_id, a.id AS automation_id FROM w, a
"""
_CROWD = """
WITH runs AS (INSERT INTO automation_runs (automation_id, workspace_id, scheduled_for, status)
              SELECT $2, $1, now() + make_interval(mins => n),
                     CASE WHEN n % 2 = 0 THEN 'queued' ELSE 'running' END
              FROM generate_series(1, 3000) AS n),
     jobs AS (INSERT INTO jobs (workspace_id, request_id, verb, input, principal, door,
                                expires_at)
              SELECT $1, 'job-' || n, 'web.scrape', '{}', '{}', 'rest', now()
              FROM generate_series(1, 3000) AS n)
INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, deadline)
SELECT $1, 'req-' || n, 'reserve', -1, 'web.scrape', now() + interval '1 minute'
FROM generate_series(1, 3000) AS n
"""

_GROWN = {"credit_ledger", "automation_runs", "jobs"}


def _whole_reads(plan: dict[str, Any]) -> list[str]:
    """The nodes of a JSON plan that read a grown table, or any index, whole."""
    node = plan["Node Type"]
    whole = [] if "Index Cond" in plan else [f"{node} on {plan.get('Index Name')}"]
    if "Index Name" not in plan:
        table = plan.get("Relation Name")
        whole = [f"{node} on {table}"] if node == "Seq Scan" and table in _GROWN else []
    return whole + [read for child in plan.get("Plans", []) for read in _whole_reads(child)]


async def test_lookups_by_key_use_the_key_before_the_first_analyze(empty_database: str) -> None:
    await migrate.migrate(empty_database)
    conn = await asyncpg.connect(empty_database)
    try:
        workspace, automation = await conn.fetchrow(_SETTLED)
        await conn.execute("ANALYZE")
        await conn.execute(_CROWD, workspace, automation)
        run = await conn.fetchval("SELECT id FROM automation_runs WHERE status = 'running'")
        job = await conn.fetchval("SELECT id FROM jobs WHERE status = 'queued' LIMIT 1")
        chat, token = uuid.uuid4(), uuid.uuid4()
        lookups = {
            "close_reservation": (workspace, "req-7", "settle", 1),
            "release_chat_lease": (
                chat, token, uuid.uuid4(), "assistant", "automation", "[]", run,
                [workspace], ["req-7"], [1], "succeeded", None,
                str(chat), "", "cp-2", "cp-1", "{}", "{}", ["turns"], ["2"], ["msgpack"], [b""],
            ),
            "finish_run": (run, "succeeded", None),
            "renew_run_lease": (run, 60.0),
            "claim_job": (job, 60.0),
            "finish_job": (job, "succeeded", "{}", None, 1),
        }  # fmt: skip
        whole = {}
        for name, args in lookups.items():
            plan = (await (await conn.prepare(queries.get(name))).explain(*args))[0]["Plan"]
            whole[name] = _whole_reads(plan)
    finally:
        await conn.close()

    assert whole == {name: [] for name in lookups}
