"""`lookout migrate`: apply migrations/*.sql in order, once, under an advisory lock."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import asyncpg

from lookout.db import checkpointer, pool, queries

logger = logging.getLogger(__name__)

_LOCK_POLL_S = 0.2


def migrations_dir() -> Path:
    """The migrations folder of the source tree (next to src/), else ./migrations."""
    beside_source = Path(__file__).resolve().parents[3] / "migrations"
    return beside_source if beside_source.is_dir() else Path.cwd() / "migrations"


def load(folder: Path) -> list[tuple[str, str]]:
    """(name, sql) of every migration file, in order."""
    return [(path.name, path.read_text("utf-8")) for path in sorted(folder.glob("*.sql"))]


async def migrate(dsn: str, folder: Path | None = None) -> list[str]:
    """Apply every pending migration, then the checkpointer's tables; return what was applied."""
    folder = folder or migrations_dir()
    with pool.translate_errors():
        conn = await asyncpg.connect(dsn)
    try:
        await _lock(conn)
        try:
            done = await _apply(conn, folder)
            # setup() is not safe to run concurrently: it stays under our advisory lock.
            await checkpointer.setup(dsn)
        finally:
            await conn.execute(queries.get("migration_unlock"))
    finally:
        await conn.close()
    return done


async def _lock(conn: asyncpg.Connection) -> None:
    while not await conn.fetchval(queries.get("migration_try_lock")):
        await asyncio.sleep(_LOCK_POLL_S)


async def _apply(conn: asyncpg.Connection, folder: Path) -> list[str]:
    await conn.execute(queries.get("create_schema_migrations"))
    applied = {row["name"] for row in await conn.fetch(queries.get("list_applied_migrations"))}
    done = []
    for name, sql in await asyncio.to_thread(load, folder):
        if name in applied:
            continue
        async with conn.transaction():
            await conn.execute(sql)
            await conn.execute(queries.get("record_migration"), name)
        logger.info("applied migration %s", name)
        done.append(name)
    return done
