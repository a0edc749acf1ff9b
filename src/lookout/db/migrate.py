"""`lookout migrate`: apply the package's migrations/*.sql in order, once, under an advisory lock.

The SQL files ship inside the package (lookout/db/migrations, package data), so an installed
wheel migrates from any directory; a folder with no migration in it is an error, never a
migration that applied nothing."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import asyncpg

from lookout import errors
from lookout.db import checkpointer, pool, queries

logger = logging.getLogger(__name__)

_LOCK_POLL_S = 0.2


def migrations_dir() -> Path:
    """The package's migrations folder."""
    return Path(__file__).resolve().parent / "migrations"


class NoMigrations(errors.ConfigError):
    """The migrations folder holds no migration: the installation is incomplete."""


def load(folder: Path) -> list[tuple[str, str]]:
    """(name, sql) of every migration file, in order; NoMigrations if there is none."""
    found = [(path.name, path.read_text("utf-8")) for path in sorted(folder.glob("*.sql"))]
    if not found:
        raise NoMigrations(f"no migration (*.sql) in {folder}: reinstall Lookout")
    return found


async def migrate(dsn: str, folder: Path | None = None) -> list[str]:
    """Apply every pending migration, then the checkpointer's tables; return what was applied."""
    pending = await asyncio.to_thread(load, folder or migrations_dir())  # before any connection
    with pool.translate_errors():
        conn = await asyncpg.connect(dsn)
    try:
        await _lock(conn)
        try:
            await conn.execute(queries.get("create_schema_migrations"))
            rows = await conn.fetch(queries.get("list_applied_migrations"))
            applied = {row["name"] for row in rows}
            done = await _apply(conn, pending, applied)
            # setup() is not safe to run concurrently: it stays under our advisory lock.
            await _setup_checkpointer(conn, dsn, applied)
        finally:
            await conn.execute(queries.get("migration_unlock"))
    finally:
        await conn.close()
    return done


async def _lock(conn: asyncpg.Connection) -> None:
    while not await conn.fetchval(queries.get("migration_try_lock")):
        await asyncio.sleep(_LOCK_POLL_S)


async def _apply(
    conn: asyncpg.Connection, pending: list[tuple[str, str]], applied: set[str]
) -> list[str]:
    done = []
    for name, sql in pending:
        if name in applied:
            continue
        async with conn.transaction():
            await conn.execute(sql)
            await conn.execute(queries.get("record_migration"), name)
        logger.info("applied migration %s", name)
        done.append(name)
    return done


async def _setup_checkpointer(conn: asyncpg.Connection, dsn: str, applied: set[str]) -> None:
    """The checkpointer's tables (the library's own migrations), once per installed version of
    the library that owns them, recorded beside ours. On existing data this skips importing
    LangGraph's saver and psycopg (0.25-0.35 s here, a third of `lookout dev`'s setup child)."""
    marker = checkpointer.setup_marker()
    if marker in applied:
        return
    await checkpointer.setup(dsn)
    if marker is not None:
        await conn.execute(queries.get("record_migration"), marker)
