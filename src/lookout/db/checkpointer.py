"""The LangGraph checkpointer: psycopg pool + AsyncPostgresSaver, built on the loop using it."""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

# A connection back in the pool for less than this is lent out again without a check: the
# check (a round trip on every checkout) was ~15 % of a scheduled turn's CPU. One idle longer
# is checked, so connections that sat through a Postgres restart are replaced, not lent out.
CHECK_IDLE_S = 5.0


class _NoLock(contextlib.AbstractAsyncContextManager[None]):
    async def __aexit__(self, *exc: object) -> None:
        return None


class _IdleCheck:
    """The pool's `reset` (on return) and `check` (on checkout) callbacks."""

    def __init__(self) -> None:
        self._returned: weakref.WeakKeyDictionary[AsyncConnection[Any], float] = (
            weakref.WeakKeyDictionary()
        )

    async def returned(self, conn: AsyncConnection[Any]) -> None:
        self._returned[conn] = time.monotonic()

    async def check(self, conn: AsyncConnection[Any]) -> None:
        if time.monotonic() - self._returned.get(conn, -CHECK_IDLE_S) >= CHECK_IDLE_S:
            await AsyncConnectionPool.check_connection(conn)


def psycopg_dsn(dsn: str) -> str:
    # psycopg accepts postgres:// and postgresql:// alike; asyncpg-only options never appear here.
    return dsn


@contextlib.asynccontextmanager
async def saver_context(dsn: str, *, max_size: int = 10) -> AsyncIterator[AsyncPostgresSaver]:
    """Open the pool and the saver on the running loop; close the pool on exit."""
    idle = _IdleCheck()
    conn_pool: AsyncConnectionPool = AsyncConnectionPool(
        psycopg_dsn(dsn),
        min_size=1,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
        check=idle.check,
        reset=idle.returned,
    )
    await conn_pool.open()
    saver = AsyncPostgresSaver(conn_pool)  # type: ignore[arg-type]
    # The saver serializes every checkpoint read and write behind one lock, which a single
    # shared connection needs; with a pool each call checks out its own connection. Measured:
    # the lock was held 56 of every 60 ms with 8 turns in flight (BENCHMARKS.md).
    saver.lock = _NoLock()  # type: ignore[assignment]
    try:
        yield saver
    finally:
        await conn_pool.close()


async def setup(dsn: str) -> None:
    """Create the checkpointer's tables; run once, from `lookout migrate`."""
    async with saver_context(dsn, max_size=1) as saver:
        await saver.setup()
