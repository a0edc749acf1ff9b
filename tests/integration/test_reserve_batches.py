"""Reserves of one workspace asked while one is being written go into one statement together,
with the closes (settles, refunds) asked meanwhile: each call still takes exactly its own
amount or is refused for its own reason, each close gives back exactly what was not used, the
balance never goes negative, and a ledger key still reserves once and closes once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from typing import Any

import asyncpg
import pytest

from lookout import errors
from lookout.access import accounts, credits, keys
from lookout.db import repo
from tests.integration.factories import TenantFactory, tenant_factory

__all__ = ["tenant_factory"]


async def reserve(
    db: asyncpg.Pool, workspace_id: uuid.UUID, request_id: str, amount: int,
    key_id: uuid.UUID | None = None,
) -> None:  # fmt: skip
    await credits.reserve(db, workspace_id=workspace_id, request_id=request_id, amount=amount,
                          verb="web.scrape", actor="test", hold_s=900, key_id=key_id)  # fmt: skip


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The request ids of every statement written for more than one reserve."""
    written: list[list[str]] = []
    together = repo.write_ledger_together

    async def spy(db: Any, *, workspace_id: uuid.UUID, reserves: Any, closes: Any) -> Any:
        if reserves:
            written.append([asked[0] for asked in reserves])
        return await together(db, workspace_id=workspace_id, reserves=reserves, closes=closes)

    monkeypatch.setattr(repo, "write_ledger_together", spy)
    return written


@pytest.fixture
def mixed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], list[str]]]:
    """(reserve request ids, close request ids) of every statement written for both kinds."""
    written: list[tuple[list[str], list[str]]] = []
    together = repo.write_ledger_together

    async def spy(db: Any, *, workspace_id: uuid.UUID, reserves: Any, closes: Any) -> Any:
        if reserves and closes:
            written.append(([asked[0] for asked in reserves], [asked[0] for asked in closes]))
        return await together(db, workspace_id=workspace_id, reserves=reserves, closes=closes)

    monkeypatch.setattr(repo, "write_ledger_together", spy)
    return written


async def settle(db: asyncpg.Pool, workspace_id: uuid.UUID, request_id: str, charged: int) -> int:
    return await credits.settle(
        db, workspace_id=workspace_id, request_id=request_id, reserved=0, charged=charged
    )


async def reserved(db: asyncpg.Pool, workspace_id: uuid.UUID, request_id: str) -> int | None:
    return await repo.get_reserved(db, workspace_id=workspace_id, request_id=request_id)


async def while_one_is_written(
    db: asyncpg.Pool, workspace_id: uuid.UUID, *calls: Coroutine[Any, Any, None]
) -> list[object]:
    """The outcome of each of `calls`, asked at once while a reservation of 1 credit ("first")
    is being written: they go into the next statement together."""
    first = asyncio.ensure_future(reserve(db, workspace_id, "first", 1))
    await asyncio.sleep(0)  # being written: the next ones are asked meanwhile
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    await first
    return list(outcomes)


async def test_concurrent_reserves_are_written_together_each_taking_its_own_amount(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[str]]
) -> None:
    # Given a workspace with 200 credits and an API key of its owner
    tenant = await tenant_factory(credits=200)
    workspace_id = tenant.workspace.id
    key_id = (await accounts.create_key(db, workspace_id=workspace_id, name="k")).key.id

    # When 40 calls reserve at once, call n 1 + n % 3 credits, half of them with the key
    await asyncio.gather(
        *(
            reserve(db, workspace_id, f"call-{n}", 1 + n % 3, key_id if n % 2 else None)
            for n in range(40)
        )
    )

    # Then each took its own amount, the balance is lower by exactly their sum, and most were
    # written with others in one statement
    amounts = [1 + n % 3 for n in range(40)]
    assert [await reserved(db, workspace_id, f"call-{n}") for n in range(40)] == amounts
    assert await repo.get_balance(db, workspace_id=workspace_id) == 200 - sum(amounts)
    assert sum(len(batch) for batch in batches) >= 30


async def test_reserves_beyond_the_balance_together_each_reserve_alone(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[str]]
) -> None:
    # Given a workspace with 10 credits, and a call holding 1 of them
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id

    # When six calls ask for 3 credits each at once (18 > 9 left)
    outcomes = await while_one_is_written(
        db, workspace_id, *(reserve(db, workspace_id, f"call-{n}", 3) for n in range(6))
    )

    # Then their statement together took nothing, and alone three of them fit and three are
    # told the credits are not there; the balance is 0, never below
    assert [len(batch) for batch in batches] == [6]
    taken = [outcome for outcome in outcomes if outcome is None]
    refused = [outcome for outcome in outcomes if isinstance(outcome, errors.InsufficientCredits)]
    assert (len(taken), len(refused)) == (3, 3), outcomes
    assert await repo.get_balance(db, workspace_id=workspace_id) == 0
    rows = await db.fetchval(
        "SELECT count(*) FROM credit_ledger WHERE workspace_id = $1 AND kind = 'reserve'",
        workspace_id,
    )
    assert rows == 4


async def test_a_ledger_key_asked_twice_together_is_reserved_once(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[str]]
) -> None:
    # Given a workspace with 10 credits
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id

    # When one ledger key is reserved twice at the same moment, with another call's
    outcomes = await while_one_is_written(
        db,
        workspace_id,
        reserve(db, workspace_id, "twice", 4),
        reserve(db, workspace_id, "twice", 4),
        reserve(db, workspace_id, "other", 2),
    )

    # Then in one statement the first asked took its credits and the second was refused as
    # already charged; the other call took its own
    assert batches == [["twice", "twice", "other"]]
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], errors.Conflict)
    assert await reserved(db, workspace_id, "twice") == 4
    assert await repo.get_balance(db, workspace_id=workspace_id) == 10 - 1 - 4 - 2


async def test_a_key_that_may_not_spend_is_refused_in_a_statement_with_others(
    db: asyncpg.Pool, tenant_factory: TenantFactory, batches: list[list[str]]
) -> None:
    # Given a workspace with 10 credits, a key of its owner, a read-only key and a revoked key
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    made = [
        (await accounts.create_key(db, workspace_id=workspace_id, name=name, scope=scope)).key.id
        for name, scope in (("full", keys.FULL), ("reader", keys.READ_ONLY), ("gone", keys.FULL))
    ]
    full, reader, gone = made
    await repo.revoke_api_key(db, key_id=gone, workspace_id=workspace_id)

    # When the three keys reserve at the same moment
    outcomes = await while_one_is_written(
        db,
        workspace_id,
        reserve(db, workspace_id, "by-full", 2, full),
        reserve(db, workspace_id, "by-reader", 2, reader),
        reserve(db, workspace_id, "by-gone", 2, gone),
    )

    # Then, written together, the full key's call took its credits and the others took nothing,
    # each told why
    assert batches == [["by-full", "by-reader", "by-gone"]]
    assert outcomes[0] is None
    assert isinstance(outcomes[1], errors.Forbidden)
    assert isinstance(outcomes[2], errors.Unauthenticated)
    assert [await reserved(db, workspace_id, name) for name in ("by-reader", "by-gone")] == [
        None,
        None,
    ]
    assert await repo.get_balance(db, workspace_id=workspace_id) == 10 - 1 - 2


async def test_reserves_and_closes_asked_meanwhile_are_written_in_one_statement(
    db: asyncpg.Pool, tenant_factory: TenantFactory, mixed: list[tuple[list[str], list[str]]]
) -> None:
    # Given a workspace with 100 credits and three reservations of 10 credits each
    tenant = await tenant_factory(credits=100)
    workspace_id = tenant.workspace.id
    for name in ("a", "b", "c"):
        await reserve(db, workspace_id, name, 10)

    # When, while a reservation of 1 is written, two new calls reserve, "a" is settled using 4
    # of its 10, "b" using all 10 and "c" is refunded, all at once
    outcomes = await while_one_is_written(
        db,
        workspace_id,
        reserve(db, workspace_id, "new-1", 7),
        settle(db, workspace_id, "a", 4),
        reserve(db, workspace_id, "new-2", 5),
        settle(db, workspace_id, "b", 10),
        credits.refund(db, workspace_id=workspace_id, request_id="c"),
    )

    # Then they were written in one statement; each reserve took its own amount, each close
    # gave back what its call did not use (a settle answers minus what it gave back), and the
    # balance moved by exactly that
    assert mixed == [(["new-1", "new-2"], ["a", "b", "c"])]
    assert outcomes == [None, -6, None, 0, None]
    assert [await reserved(db, workspace_id, name) for name in ("new-1", "new-2")] == [7, 5]
    assert await repo.get_balance(db, workspace_id=workspace_id) == 100 - 30 - 1 - 7 - 5 + 6 + 10
    charges = [
        await repo.get_charge(db, workspace_id=workspace_id, request_id=name)
        for name in ("a", "b", "c")
    ]
    assert charges == [4, 10, 0]


async def test_a_reserve_is_taken_when_the_closes_beside_it_give_back_as_much(
    db: asyncpg.Pool, tenant_factory: TenantFactory, mixed: list[tuple[list[str], list[str]]]
) -> None:
    # Given a workspace with 20 credits and a reservation of 6 credits
    tenant = await tenant_factory(credits=20)
    workspace_id = tenant.workspace.id
    await reserve(db, workspace_id, "old", 6)

    # When a new call reserves 6 while the old one is refunded (the balance moves by 0)
    outcomes = await while_one_is_written(
        db,
        workspace_id,
        reserve(db, workspace_id, "new", 6),
        credits.refund(db, workspace_id=workspace_id, request_id="old"),
    )

    # Then, in one statement, the reservation is taken (not refused) and the refund written
    assert mixed == [(["new"], ["old"])]
    assert outcomes == [None, None]
    assert await reserved(db, workspace_id, "new") == 6
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="old") == 0
    assert await repo.get_balance(db, workspace_id=workspace_id) == 20 - 1 - 6


async def test_reserves_beyond_the_balance_with_closes_are_each_written_alone(
    db: asyncpg.Pool, tenant_factory: TenantFactory, mixed: list[tuple[list[str], list[str]]]
) -> None:
    # Given a workspace with 10 credits, 6 of them held by a call that will use 2
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    await reserve(db, workspace_id, "held", 6)

    # When, while a reservation of 1 is written, the held call settles and three calls ask for
    # 3 credits each (9 > 3 left + 4 given back)
    outcomes = await while_one_is_written(
        db,
        workspace_id,
        settle(db, workspace_id, "held", 2),
        *(reserve(db, workspace_id, f"call-{n}", 3) for n in range(3)),
    )

    # Then their statement together wrote nothing, and alone the settle was written, two of the
    # three fit and one is told the credits are not there; the balance is 1, never below
    assert mixed == [(["call-0", "call-1", "call-2"], ["held"])]
    assert outcomes[0] == -4
    refused = [
        outcome for outcome in outcomes[1:] if isinstance(outcome, errors.InsufficientCredits)
    ]
    assert (outcomes[1:].count(None), len(refused)) == (2, 1), outcomes
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="held") == 2
    assert await repo.get_balance(db, workspace_id=workspace_id) == 10 - 1 - 2 - 6


async def test_a_key_reserved_twice_and_a_close_asked_twice_beside_it_each_happen_once(
    db: asyncpg.Pool, tenant_factory: TenantFactory, mixed: list[tuple[list[str], list[str]]]
) -> None:
    # Given a workspace with 30 credits and a reservation of 5 under "used"
    tenant = await tenant_factory(credits=30)
    workspace_id = tenant.workspace.id
    await reserve(db, workspace_id, "used", 5)

    # When "used" is reserved again (a replayed ledger key) and settled twice, beside a new call
    outcomes = await while_one_is_written(
        db,
        workspace_id,
        reserve(db, workspace_id, "used", 5),
        settle(db, workspace_id, "used", 3),
        settle(db, workspace_id, "used", 3),
        reserve(db, workspace_id, "fresh", 4),
    )

    # Then the replay takes nothing (already charged), the settle is written once (the second
    # reports what the first charged), and the new call takes its own
    assert mixed == [(["used", "fresh"], ["used", "used"])]
    assert isinstance(outcomes[0], errors.Conflict)
    assert outcomes[1:] == [-2, 3, None]
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="used") == 3
    assert await repo.get_balance(db, workspace_id=workspace_id) == 30 - 5 + 2 - 1 - 4
