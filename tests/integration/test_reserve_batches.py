"""Reserves of one workspace asked while one is being written go into one statement together:
each call still takes exactly its own amount or is refused for its own reason, the balance
never goes negative, and a ledger key still reserves once."""

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
    together = repo.reserve_credits_together

    async def spy(db: Any, *, workspace_id: uuid.UUID, reserves: Any) -> Any:
        written.append([asked[0] for asked in reserves])
        return await together(db, workspace_id=workspace_id, reserves=reserves)

    monkeypatch.setattr(repo, "reserve_credits_together", spy)
    return written


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
