"""The ledger's hot statements (a verb call's reserve and its close) commit without waiting for
the WAL flush, in their own transaction only; what they write is seen by every other session
at once, so a ledger key still reserves once and the balance still cannot go negative."""

from __future__ import annotations

import datetime as dt
import uuid

import asyncpg
import pytest

from lookout import errors
from lookout.access import accounts
from lookout.db import repo
from tests.integration.factories import TenantFactory, tenant_factory

__all__ = ["tenant_factory"]

DEADLINE = dt.timedelta(minutes=15)


async def reserve(
    db: asyncpg.Connection | asyncpg.Pool, workspace_id: uuid.UUID, request_id: str,
    amount: int, key_id: uuid.UUID | None = None,
) -> int | None:  # fmt: skip
    return await repo.reserve_credits(
        db, workspace_id=workspace_id, request_id=request_id, amount=amount, verb="web.scrape",
        actor="test", deadline=_deadline(), key_id=key_id,
    )  # fmt: skip


def _deadline() -> dt.datetime:
    return dt.datetime.now(dt.UTC) + DEADLINE


@pytest.mark.parametrize("with_key", [False, True], ids=["reserve", "reserve for a key"])
async def test_a_reserve_does_not_wait_for_the_flush_and_is_seen_at_once(
    db: asyncpg.Pool, tenant_factory: TenantFactory, with_key: bool
) -> None:
    # Given a workspace with 12 credits (and, for one case, an API key of its owner)
    tenant = await tenant_factory(credits=12)
    workspace_id = tenant.workspace.id
    key_id = None
    if with_key:
        made = await accounts.create_key(db, workspace_id=workspace_id, name="k")
        key_id = made.key.id

    async with db.acquire() as conn, db.acquire() as other:
        assert await conn.fetchval("SHOW synchronous_commit") == "on"
        # When a call reserves 7 of them in a transaction of its own
        async with conn.transaction():
            balance = await reserve(conn, workspace_id, "call-1", 7, key_id)
            # Then that transaction's commit does not wait for the flush
            assert await conn.fetchval("SHOW synchronous_commit") == "off"
        # nor does that of two calls reserving together
        async with conn.transaction():
            together, _ = await repo.write_ledger_together(
                conn, workspace_id=workspace_id, reserves=[
                    ("call-2", 1, "web.scrape", "test", _deadline(), key_id),
                    ("call-3", 1, "web.scrape", "test", _deadline(), key_id),
                ], closes=[],
            )  # fmt: skip
            assert await conn.fetchval("SHOW synchronous_commit") == "off"
        # and the connection's next transactions do again
        assert await conn.fetchval("SHOW synchronous_commit") == "on"
        assert balance == 5
        assert together == {"call-2": 3, "call-3": 3}  # the balance after both

        # And another session sees the reservation: the same ledger key takes nothing again,
        # and a new one cannot take more than what is left
        assert await reserve(other, workspace_id, "call-1", 1, key_id) is None
        with pytest.raises(errors.InsufficientCredits):
            await reserve(other, workspace_id, "call-4", 4, key_id)
        assert await repo.get_balance(other, workspace_id=workspace_id) == 3


async def test_closes_do_not_wait_for_the_flush(
    db: asyncpg.Pool, tenant_factory: TenantFactory
) -> None:
    # Given three reservations of 5 credits each
    tenant = await tenant_factory(credits=20)
    workspace_id = tenant.workspace.id
    for name in ("a", "b", "c"):
        await reserve(db, workspace_id, name, 5)

    async with db.acquire() as conn:
        # When one is settled alone and two together, each in a transaction of its own
        async with conn.transaction():
            alone = await repo.close_reservation(
                conn, workspace_id=workspace_id, request_id="a", kind="settle", charged=2
            )
            assert await conn.fetchval("SHOW synchronous_commit") == "off"
        async with conn.transaction():
            _, together = await repo.write_ledger_together(
                conn, workspace_id=workspace_id, reserves=[],
                closes=[("b", "settle", 5), ("c", "refund", 0)],
            )  # fmt: skip
            assert await conn.fetchval("SHOW synchronous_commit") == "off"
        assert await conn.fetchval("SHOW synchronous_commit") == "on"
        # nor that of closes and reserves written together
        async with conn.transaction():
            taken, closed = await repo.write_ledger_together(
                conn, workspace_id=workspace_id,
                reserves=[("d", 1, "web.scrape", "test", _deadline(), None)],
                closes=[("c", "settle", 1)],
            )  # fmt: skip
            assert await conn.fetchval("SHOW synchronous_commit") == "off"
        assert await conn.fetchval("SHOW synchronous_commit") == "on"

    # Then each gave back what it did not use, and the balance says so
    assert alone == 3
    assert sorted(together) == [("b", "settle", 0), ("c", "refund", 5)]
    assert (taken, closed) == ({"d": 20 - 2 - 5 - 1}, [])  # "c" was closed already
    assert await repo.get_balance(db, workspace_id=workspace_id) == 20 - 2 - 5 - 1
