"""Migration 0005 on a database that has lived: jobs that shared a ledger key (the X-Request-Id
exploit) no longer stop the unique index, and keys made without a creator act for the owner."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from lookout.db import migrate

BEFORE = "0005"


@pytest.fixture
async def empty_database(backing: tuple[str, str]) -> AsyncIterator[str]:
    server = backing[0]
    name = f"m0005_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(f"{server}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{server}/{name}"
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


def migrations_before(tmp_path: Path) -> Path:
    for path in migrate.migrations_dir().glob("*.sql"):
        if path.name < BEFORE:
            shutil.copy(path, tmp_path / path.name)
    return tmp_path


SEED = """
WITH u AS (INSERT INTO users (email, password_hash) VALUES ('o@example.com', 'x') RETURNING id),
     w AS (INSERT INTO workspaces (name, owner_id) SELECT 'w', id FROM u RETURNING id, owner_id),
     m AS (INSERT INTO memberships (workspace_id, user_id, role)
           SELECT id, owner_id, 'owner' FROM w),
     k AS (INSERT INTO api_keys (workspace_id, name, key_hash, prefix)
           SELECT id, 'cli', '\\x01', 'lk_abcdefgh' FROM w)
INSERT INTO jobs (workspace_id, request_id, verb, input, principal, door, expires_at)
SELECT w.id, 'same-id', 'web.scrape', '{}', '{}', 'rest', now() + interval '1 day'
FROM w, generate_series(1, 3)
RETURNING workspace_id
"""


async def test_0005_applies_over_shared_job_keys_and_keys_without_a_creator(
    empty_database: str, tmp_path: Path
) -> None:
    # Given a database at 0004 with three jobs sharing one request id and a creator-less key
    await migrate.migrate(empty_database, migrations_before(tmp_path))
    conn = await asyncpg.connect(empty_database)
    try:
        workspace_id = (await conn.fetch(SEED))[0]["workspace_id"]

        # When 0005 is applied
        applied = await migrate.migrate(empty_database)
        assert applied[0] == "0005_call_keys_and_key_scopes.sql"  # the later ones follow it

        # Then the jobs have distinct keys (the first keeps its own), and the key is the owner's
        keys = [r["request_id"] for r in await conn.fetch(
            "SELECT request_id FROM jobs WHERE workspace_id = $1 ORDER BY created_at, id",
            workspace_id,
        )]  # fmt: skip
        assert keys[0] == "same-id" and len(set(keys)) == 3
        owner = await conn.fetchval("SELECT owner_id FROM workspaces WHERE id = $1", workspace_id)
        assert await conn.fetchval("SELECT created_by FROM api_keys") == owner
        # And a job can no longer share its ledger key
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute(
                "INSERT INTO jobs (workspace_id, request_id, verb, input, principal, door, "
                "expires_at) VALUES ($1, 'same-id', 'web.scrape', '{}', '{}', 'rest', now())",
                workspace_id,
            )
    finally:
        await conn.close()
