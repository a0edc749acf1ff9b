"""Chats as a service: create, read, rename, delete (with checkpoints and watches), messages."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import asyncpg

from lookout import errors
from lookout.access.principals import Principal
from lookout.db import history as history_db
from lookout.db import repo

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

MAX_PAGE = 200


def view(chat: repo.Chat, watch: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": str(chat.id),
        "title": chat.title,
        "created_at": chat.created_at.isoformat(),
        "updated_at": chat.updated_at.isoformat(),
        "watch": watch,
    }


def message_view(
    message: repo.ChatMessage, manual: frozenset[uuid.UUID] = frozenset()
) -> dict[str, Any]:
    """A stored message; `manual`: the ids of runs someone asked for (not scheduled ones)."""
    return {
        "id": str(message.id),
        "seq": message.seq,
        "role": message.role,
        "source": message.source,
        "parts": message.parts,
        "run_id": str(message.run_id) if message.run_id else None,
        "manual": message.run_id in manual,
        "created_at": message.created_at.isoformat(),
    }


def check_title(title: object) -> str:
    if not isinstance(title, str) or len(title) > 200:
        raise errors.InvalidInput("A title is text of at most 200 characters.")
    return title.strip()


async def create(db: asyncpg.Pool, principal: Principal, title: str = "") -> repo.Chat:
    principal.require("editor")
    return await repo.insert_chat(
        db, workspace_id=principal.workspace_id, created_by=principal.user_id, title=title
    )


async def get(db: asyncpg.Pool, principal: Principal, chat_id: uuid.UUID) -> repo.Chat:
    chat = await repo.get_chat(db, chat_id=chat_id, workspace_id=principal.workspace_id)
    if chat is None:
        raise errors.NotFound("No such chat in this workspace.")
    return chat


async def rename(
    db: asyncpg.Pool, principal: Principal, chat_id: uuid.UUID, title: str
) -> repo.Chat:
    principal.require("editor")
    chat = await repo.rename_chat(
        db, chat_id=chat_id, workspace_id=principal.workspace_id, title=title
    )
    if chat is None:
        raise errors.NotFound("No such chat in this workspace.")
    return chat


async def delete(
    db: asyncpg.Pool,
    saver_of: Callable[[], Awaitable[AsyncPostgresSaver]],
    principal: Principal,
    chat_id: uuid.UUID,
) -> None:
    """Delete the chat, its messages, its watches and its checkpoints (`saver_of`: the saver,
    opened if need be)."""
    principal.require("editor")
    if not await repo.delete_chat(db, chat_id=chat_id, workspace_id=principal.workspace_id):
        raise errors.NotFound("No such chat in this workspace.")
    await (await saver_of()).adelete_thread(str(chat_id))


async def messages(
    db: asyncpg.Pool, principal: Principal, chat_id: uuid.UUID, *, after: int, limit: int
) -> list[repo.ChatMessage]:
    await get(db, principal, chat_id)
    return await repo.list_chat_messages(
        db, chat_id=chat_id, workspace_id=principal.workspace_id, after_seq=after,
        limit=max(1, min(limit, MAX_PAGE)),
    )  # fmt: skip


async def list_page(
    db: asyncpg.Pool, principal: Principal, *, limit: int, offset: int
) -> list[repo.Chat]:
    """A page of the workspace's chats."""
    return await repo.list_chats(
        db, workspace_id=principal.workspace_id, limit=limit, offset=offset
    )


async def manual_runs(
    db: asyncpg.Pool, principal: Principal, found: list[repo.ChatMessage]
) -> frozenset[uuid.UUID]:
    """Which of the messages' runs were asked for ("Run now"), so they are not called scheduled."""
    ids = list({m.run_id for m in found if m.run_id is not None})
    if not ids:
        return frozenset()
    return await history_db.manual_runs(db, workspace_id=principal.workspace_id, run_ids=ids)
