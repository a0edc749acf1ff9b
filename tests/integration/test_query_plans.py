"""How Postgres plans our hottest statements: by key, and once per connection."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import asyncpg

from lookout.db import queries

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


def _release_args(run: uuid.UUID, workspace: uuid.UUID, request_id: str) -> tuple[object, ...]:
    """A turn's end as release_chat_lease takes it: message, one settle, run end, checkpoint,
    what the run found."""
    chat = uuid.uuid4()
    return (
        chat, uuid.uuid4(), uuid.uuid4(), "assistant", "automation", "[]", run,
        [workspace], [request_id], [1], "succeeded", None,
        str(chat), "", "cp-2", "cp-1", "{}", "{}", ["pages", "turns"], ["2", "2"],
        ["msgpack", "msgpack"], [b"", b""], '{"changed": false}',
    )  # fmt: skip


async def test_lookups_by_key_use_the_key_before_the_first_analyze(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        workspace, automation = await conn.fetchrow(_SETTLED)
        await conn.execute("ANALYZE")
        await conn.execute(_CROWD, workspace, automation)
        run = await conn.fetchval("SELECT id FROM automation_runs WHERE status = 'running' LIMIT 1")
        job = await conn.fetchval("SELECT id FROM jobs WHERE status = 'queued' LIMIT 1")
        lookups = {
            "close_reservation": (workspace, "req-7", "settle", 1),
            "write_ledger_together": (
                workspace, ["new-3"], [1], ["web.scrape"], ["t"], [dt.datetime.now(dt.UTC)],
                [uuid.uuid4()], ["req-7", "req-8"], ["settle", "refund"], [1, 0],
            ),
            "release_chat_lease": _release_args(run, workspace, "req-7"),
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


async def test_a_turns_release_is_planned_once_not_on_every_call(database_url: str) -> None:
    # Postgres plans a prepared statement for its values 5 times, then keeps one generic plan
    # unless that plan looks costlier. For unnest of a parameter it guesses 10 elements where
    # a call's values show 1: with a ledger of some size, the settle's 10 guessed index lookups
    # made the generic plan look 3x costlier, so every turn's release was planned anew
    # (0.4 ms, as long as running it).
    sql = queries.get("release_chat_lease")
    conn = await asyncpg.connect(database_url)
    try:
        workspace, automation = await conn.fetchrow(_SETTLED)
        await conn.execute(_CROWD, workspace, automation)
        await conn.execute("ANALYZE")
        async with conn.transaction():
            for _ in range(10):
                await conn.fetchval(
                    sql, *_release_args(uuid.uuid4(), workspace, f"r-{uuid.uuid4()}")
                )
            plans = await conn.fetchrow(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                " WHERE statement = $1",
                sql,
            )
    finally:
        await conn.close()

    assert plans is not None
    assert (plans["custom_plans"], plans["generic_plans"]) == (5, 5)


def _index_conditions(plan: dict[str, Any], index: str) -> list[str]:
    """The Index Cond of every node of a JSON plan that reads `index`."""
    found = [plan.get("Index Cond", "")] if plan.get("Index Name") == index else []
    return found + [
        cond for child in plan.get("Plans", []) for cond in _index_conditions(child, index)
    ]


async def test_closes_written_together_look_each_reservation_up_by_its_whole_key(
    database_url: str,
) -> None:
    # Closes batched in one statement (credits._Closer) find each reservation by workspace,
    # request id and kind, in the plan Postgres keeps for the statement (a generic one).
    conn = await asyncpg.connect(database_url)
    try:
        workspace, automation = await conn.fetchrow(_SETTLED)
        await conn.execute(_CROWD, workspace, automation)
        await conn.execute("ANALYZE")
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        sql = queries.get("write_ledger_together").rstrip().rstrip(";")
        await conn.execute(
            "PREPARE closes (uuid, text[], bigint[], text[], text[], timestamptz[], uuid[],"
            f" text[], text[], bigint[]) AS {sql}"
        )
        rows = await conn.fetch(
            f"EXPLAIN (FORMAT JSON) EXECUTE closes ('{workspace}', '{{}}', '{{}}', '{{}}', '{{}}',"
            " '{}', '{}', ARRAY['req-7', 'req-8'], ARRAY['settle', 'refund'],"
            " ARRAY[1, 0]::bigint[])"
        )
        plan = json.loads(rows[0][0])[0]["Plan"]
    finally:
        await conn.close()

    conditions = _index_conditions(plan, "credit_ledger_workspace_id_request_id_kind_key")
    assert conditions, json.dumps(plan)[:2000]
    assert all("request_id" in condition for condition in conditions), conditions
