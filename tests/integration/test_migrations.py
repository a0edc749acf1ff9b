from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from lookout.db import checkpointer, migrate


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


async def test_the_checkpointer_is_set_up_once_per_version_of_its_library(
    empty_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await migrate.migrate(empty_database)
    marker = checkpointer.setup_marker()
    assert marker is not None and marker.startswith("checkpointer: langgraph-checkpoint-postgres ")
    conn = await asyncpg.connect(empty_database)
    try:
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations WHERE name = $1", marker)
        setups: list[str] = []

        async def counted(dsn: str) -> None:
            setups.append(dsn)

        monkeypatch.setattr(checkpointer, "setup", counted)
        assert await migrate.migrate(empty_database) == []
        assert setups == []  # existing data: the saver is not imported, nothing is run

        # Another version of the library installed: its migrations run (then are recorded).
        monkeypatch.setattr(checkpointer, "setup_marker", lambda: "checkpointer: next")
        assert await migrate.migrate(empty_database) == []
        assert setups == [empty_database]
        assert await migrate.migrate(empty_database) == []
        assert setups == [empty_database]

        # No metadata for the library (a vendored copy): set up every time, nothing recorded.
        monkeypatch.setattr(checkpointer, "setup_marker", lambda: None)
        assert await migrate.migrate(empty_database) == []
        assert await migrate.migrate(empty_database) == []
        assert setups == [empty_database] * 3
    finally:
        await conn.close()


def _run_migrate(dsn: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "REDIS_URL": "redis://unused",
        "LOOKOUT_SECRET_KEY": "k",
        "LOOKOUT_PUBLIC_URL": "http://lookout.test",
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
