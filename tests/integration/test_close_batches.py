"""Closes (settles, refunds) of one workspace asked while one is being written go into one
statement together: each caller still gets its own exact answer, the balance ends exact, and
nothing is closed twice."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import pytest

from lookout import errors
from lookout.access import credits
from lookout.db import repo
from tests.integration.factories import TenantFactory, tenant_factory

__all__ = ["tenant_factory"]


async def reserve(db: asyncpg.Pool, workspace_id: uuid.UUID, request_id: str, amount: int) -> None:
    await credits.reserve(db, workspace_id=workspace_id, request_id=request_id, amount=amount,
                          verb="web.scrape", actor="test", hold_s=900)  # fmt: skip


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[str, str, int]]]:
    """The closes of every statement written for more than one."""
    written: list[list[tuple[str, str, int]]] = []
    together = repo.write_ledger_together

    async def spy(db: Any, *, workspace_id: uuid.UUID, reserves: Any, closes: Any) -> Any:
        if closes:
            written.append(list(closes))
        return await together(db, workspace_id=workspace_id, reserves=reserves, closes=closes)

    monkeypatch.setattr(repo, "write_ledger_together", spy)
    return written


async def test_concurrent_settles_are_written_together_each_with_its_own_charge(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[Any]]
) -> None:
    # Given 40 calls of one workspace that reserved 3 credits each (120 of 200)
    tenant = await tenant_factory(credits=200)
    workspace_id = tenant.workspace.id
    for n in range(40):
        await reserve(db, workspace_id, f"call-{n}", 3)

    # When they all settle at once, call n having used n % 4 credits (3 at most)
    charges = await asyncio.gather(
        *(
            credits.settle(
                db, workspace_id=workspace_id, request_id=f"call-{n}", reserved=3, charged=n % 4
            )
            for n in range(40)
        )
    )

    # Then each is told its own charge, the balance is lower by exactly their sum, each
    # reservation is closed once, and most were written with others in one statement
    assert charges == [n % 4 for n in range(40)]
    assert await repo.get_balance(db, workspace_id=workspace_id) == 200 - sum(charges)
    for n in range(40):
        assert await repo.get_charge(db, workspace_id=workspace_id, request_id=f"call-{n}") == n % 4
    assert sum(len(batch) for batch in batches) >= 30
    closes = await db.fetchval(
        "SELECT count(*) FROM credit_ledger WHERE workspace_id = $1 AND kind <> 'reserve'"
        " AND request_id LIKE 'call-%'",
        workspace_id,
    )
    assert closes == 40


async def test_a_key_closed_twice_at_once_is_closed_once_and_both_callers_agree(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[Any]]
) -> None:
    # Given one reservation of 5 credits, and another call's
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    await reserve(db, workspace_id, "busy", 1)
    await reserve(db, workspace_id, "twice", 5)

    # When it is settled (2 used), settled again and refunded at the same moment, with the
    # other call's settle
    busy = credits.settle(db, workspace_id=workspace_id, request_id="busy", reserved=1, charged=1)
    settle = credits.settle(
        db, workspace_id=workspace_id, request_id="twice", reserved=5, charged=2
    )
    again = credits.settle(db, workspace_id=workspace_id, request_id="twice", reserved=5, charged=2)
    refund = credits.refund(db, workspace_id=workspace_id, request_id="twice")
    _, first, second, _ = await asyncio.gather(busy, settle, again, refund)

    # Then one close was written, and what both settles report is what the ledger charged
    assert any(("twice", "refund", 0) in batch for batch in batches)
    charged = await repo.get_charge(db, workspace_id=workspace_id, request_id="twice")
    assert charged in (0, 2)
    assert first == second == charged
    assert await repo.get_balance(db, workspace_id=workspace_id) == 10 - 1 - charged
    rows = await db.fetchval(
        "SELECT count(*) FROM credit_ledger WHERE workspace_id = $1 AND request_id = 'twice'",
        workspace_id,
    )
    assert rows == 2  # the reservation and one close


async def test_a_close_of_an_already_closed_reservation_reports_its_first_charge(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[Any]]
) -> None:
    # Given a reservation of 4 credits the stale sweeper already refunded
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    await reserve(db, workspace_id, "busy", 1)
    await reserve(db, workspace_id, "late", 4)
    await credits.refund(db, workspace_id=workspace_id, request_id="late")

    # When its call settles late, in a statement with another call's settle (asked twice)
    busy = credits.settle(db, workspace_id=workspace_id, request_id="busy", reserved=1, charged=1)
    other = credits.settle(db, workspace_id=workspace_id, request_id="late", reserved=4, charged=4)
    another = credits.settle(
        db, workspace_id=workspace_id, request_id="busy", reserved=1, charged=0
    )
    _, late, busy_again = await asyncio.gather(busy, other, another)

    # Then it is told it was charged nothing (the refund stands), and nothing else moved
    assert late == 0
    assert busy_again == 1
    assert any(("late", "settle", 4) in batch for batch in batches)
    assert await repo.get_balance(db, workspace_id=workspace_id) == 9


async def test_a_failed_statement_leaves_each_caller_to_write_its_own(
    db: asyncpg.Pool, tenant_factory: TenantFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given three reservations, and a batched statement that fails once (an outage)
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    for name in ("a", "b", "c"):
        await reserve(db, workspace_id, name, 2)
    failed: list[int] = []

    async def outage(db: Any, *, workspace_id: uuid.UUID, reserves: Any, closes: Any) -> Any:
        failed.append(len(closes))
        raise errors.Unavailable("The database is unavailable.")

    monkeypatch.setattr(repo, "write_ledger_together", outage)

    # When they settle at once
    charged = await asyncio.gather(
        *(
            credits.settle(db, workspace_id=workspace_id, request_id=name, reserved=2, charged=1)
            for name in ("a", "b", "c")
        )
    )

    # Then the batch failed (all three were asked in the same turn of the event loop), and
    # each was written alone all the same
    assert failed == [3]
    assert charged == [1, 1, 1]
    assert await repo.get_balance(db, workspace_id=workspace_id) == 7


async def test_a_caller_that_gives_up_waiting_still_has_its_close_written(
    db: asyncpg.Pool, tenant_factory: TenantFactory
) -> None:
    # Given two reservations of 3 credits
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    await reserve(db, workspace_id, "first", 3)
    await reserve(db, workspace_id, "gone", 3)

    # When the second's caller is cancelled while the first is being written
    first = asyncio.ensure_future(
        credits.settle(db, workspace_id=workspace_id, request_id="first", reserved=3, charged=3)
    )
    gone = asyncio.ensure_future(
        credits.settle(db, workspace_id=workspace_id, request_id="gone", reserved=3, charged=1)
    )
    await asyncio.sleep(0)
    gone.cancel()
    assert await first == 3
    with pytest.raises(asyncio.CancelledError):
        await gone
    for _ in range(100):
        if await repo.get_charge(db, workspace_id=workspace_id, request_id="gone") is not None:
            break
        await asyncio.sleep(0.01)

    # Then its settle was written: 1 charged, 2 returned
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="gone") == 1
    assert await repo.get_balance(db, workspace_id=workspace_id) == 10 - 3 - 1
