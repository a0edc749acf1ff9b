"""Migration 0009: connectors that exist when it runs keep chat use; new ones start without."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from lookout.access import accounts
from lookout.db import migrate, pool, repo
from tests.integration.test_migrations import empty_database

__all__ = ["empty_database"]


async def test_existing_connectors_keep_chat_use_and_new_ones_start_without(
    empty_database: str, tmp_path: Path
) -> None:
    # Given a database migrated up to 0008, with a connector
    full = migrate.migrations_dir()
    for path in sorted(full.glob("*.sql")):
        if path.name < "0009":
            shutil.copy(path, tmp_path / path.name)
    await migrate.migrate(empty_database, tmp_path)
    db = await pool.create_pool(empty_database, max_size=2)
    try:
        user = await accounts.create_user(db, email="m@example.com", password="correct horse b")
        workspace = await accounts.create_workspace(db, name="W", owner_id=user.id, credits=0)
        existing = await repo.insert_mcp_connector(
            db, connector_id=uuid.uuid4(), workspace_id=workspace.id, name="old",
            url="https://mcp.example.com", url_sealed=b"sealed", headers_encrypted=None,
        )  # fmt: skip

        # When the rest is applied and a connector is added after
        applied = await migrate.migrate(empty_database, full)
        added = await repo.insert_mcp_connector(
            db, connector_id=uuid.uuid4(), workspace_id=workspace.id, name="new",
            url="https://mcp.example.com", url_sealed=b"sealed", headers_encrypted=None,
        )  # fmt: skip
        marked = await repo.list_chat_connector_ids(db, workspace_id=workspace.id)
    finally:
        await db.close()

    # Then the old one is still for chat use, the new one is not
    assert "0009_connector_chat_use.sql" in applied
    assert marked == {existing.id} and added.id not in marked
