"""The LangGraph checkpointer: psycopg pool + AsyncPostgresSaver, built on the loop using it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool


def psycopg_dsn(dsn: str) -> str:
    # psycopg accepts postgres:// and postgresql:// alike; asyncpg-only options never appear here.
    return dsn


@contextlib.asynccontextmanager
async def saver_context(dsn: str, *, max_size: int = 10) -> AsyncIterator[AsyncPostgresSaver]:
    """Open the pool and the saver on the running loop; close the pool on exit."""
    conn_pool: AsyncConnectionPool = AsyncConnectionPool(
        psycopg_dsn(dsn),
        min_size=1,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
        check=AsyncConnectionPool.check_connection,
    )
    await conn_pool.open()
    try:
        yield AsyncPostgresSaver(conn_pool)  # type: ignore[arg-type]
    finally:
        await conn_pool.close()


async def setup(dsn: str) -> None:
    """Create the checkpointer's tables; run once, from `lookout migrate`."""
    async with saver_context(dsn, max_size=1) as saver:
        await saver.setup()
