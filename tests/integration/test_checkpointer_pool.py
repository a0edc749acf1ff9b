"""The checkpointer's pool checks a connection on checkout only after it sat idle a while."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from lookout.db import checkpointer


async def test_a_recently_returned_connection_is_lent_unchecked_an_idle_one_is_checked(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a pool whose idle threshold is short, and a count of the checks it makes
    monkeypatch.setattr(checkpointer, "CHECK_IDLE_S", 1.0)  # a loaded machine stalls
    checks: list[int] = []
    check = AsyncConnectionPool.check_connection

    async def counted(conn: AsyncConnection[Any]) -> None:
        checks.append(1)
        await check(conn)

    monkeypatch.setattr(AsyncConnectionPool, "check_connection", counted)
    async with checkpointer.saver_context(database_url, max_size=1) as saver:
        pool = saver.conn

        # When one connection is used five times in a row
        for _ in range(5):
            async with pool.connection() as conn:  # type: ignore[union-attr]
                await conn.execute("SELECT 1")
        in_a_row = len(checks)

        # And once more after it sat idle past the threshold
        await asyncio.sleep(1.2)
        async with pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute("SELECT 1")

    # Then only its first checkout (never returned yet) was checked in the run, and the idle
    # one was checked again
    assert in_a_row == 1
    assert len(checks) == 2
