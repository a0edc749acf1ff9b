"""A chat turn's verb calls are settled with the turn's answer, in the statement that releases
the chat: charged once, the unused rest returned, nothing written twice when retried."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from lookout.access import credits
from lookout.chat import lease
from lookout.db import repo
from tests.integration.factories import TenantFactory, tenant_factory

__all__ = ["tenant_factory"]


async def leased_chat(
    db: asyncpg.Pool, tenant_factory: TenantFactory
) -> tuple[uuid.UUID, repo.Chat, uuid.UUID]:
    """(workspace with 10 credits, a chat of it, the lease token of a turn on that chat)."""
    tenant = await tenant_factory(credits=10)
    workspace_id = tenant.workspace.id
    chat = await repo.insert_chat(
        db, workspace_id=workspace_id, created_by=tenant.user.id, title="t"
    )
    return workspace_id, chat, await lease.acquire(db, chat.id)


async def reserve(db: asyncpg.Pool, workspace_id: uuid.UUID, request_id: str, **kw: Any) -> None:
    await credits.reserve(db, workspace_id=workspace_id, request_id=request_id,
                          verb="web.scrape", actor="test", **kw)  # fmt: skip


async def test_the_answer_and_its_settles_are_written_with_the_release_once(
    db: asyncpg.Pool, tenant_factory: TenantFactory
) -> None:
    # Given a turn holding its chat's lease, with two verb calls that reserved 3 and 1 credits
    workspace_id, chat, token = await leased_chat(db, tenant_factory)
    for request_id, amount in (("turn:a", 3), ("turn:b", 1)):
        await reserve(db, workspace_id, request_id, amount=amount, hold_s=900)
    assert await repo.get_balance(db, workspace_id=workspace_id) == 6

    # When the turn ends: the first call used 1 of its 3 credits, the second all of its 1
    answer = repo.NewMessage(uuid.uuid4(), "assistant", "user", [{"type": "text", "text": "hi"}])
    settles = [(workspace_id, "turn:a", 1), (workspace_id, "turn:b", 1)]
    for _ in range(2):  # and the end is written twice (a retry after an outage)
        await lease.release(db, chat.id, token, message=answer, settles=settles)

    # Then the chat is free, the answer stored once, 2 credits charged and 2 returned once,
    # and no reservation is left for the sweeper to refund
    assert await repo.chat_busy_until(db, chat_id=chat.id) is None
    stored = await repo.list_chat_messages(
        db, chat_id=chat.id, workspace_id=workspace_id, after_seq=0, limit=10
    )
    assert [m.id for m in stored] == [answer.id]
    assert await repo.get_balance(db, workspace_id=workspace_id) == 8
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="turn:a") == 1
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="turn:b") == 1
    assert await repo.ledger_sum(db, workspace_id=workspace_id) == 8
    stale = await repo.list_stale_reservations(db, limit=1000)
    assert not [r for r in stale if r[0] == workspace_id]


async def test_a_turn_cut_before_its_end_leaves_its_reservation_to_the_sweeper(
    db: asyncpg.Pool, tenant_factory: TenantFactory
) -> None:
    # Given a turn whose verb call reserved a credit, then was cut off (no closing message)
    workspace_id, chat, token = await leased_chat(db, tenant_factory)
    await reserve(db, workspace_id, "cut:a", amount=1, hold_s=0)
    async with lease.kept(db, chat.id, token) as held:
        held.settles = [(workspace_id, "cut:a", 1)]  # never reaches a closing message

    # Then nothing was charged for it: the sweeper refunds the reservation
    assert await repo.get_charge(db, workspace_id=workspace_id, request_id="cut:a") is None
    await credits.release_stale(db)
    assert await repo.get_balance(db, workspace_id=workspace_id) == 10
    assert await repo.chat_busy_until(db, chat_id=chat.id) is None
