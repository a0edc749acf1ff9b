"""A chat turn refused or cut short by an outage: the client hears why, the chat stays free."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

import asyncpg
import pytest

from lookout import app, appkeys, errors
from lookout.chat import events, lease
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import sse
from tests.integration.factories import Tenant, TenantFactory, tenant_factory

__all__ = ["tenant_factory"]

REDIS_DOWN = errors.Unavailable("The event stream is unavailable; retry shortly.")
DATABASE_DOWN = errors.Unavailable("The database is unavailable; retry shortly.")


@dataclasses.dataclass
class Chat:
    client: Any
    tenant: Tenant
    id: str

    async def say(self, text: str) -> sse.Stream:
        return await sse.stream(
            str(self.client.make_url("")).rstrip("/"), "POST", f"/api/chats/{self.id}/messages",
            headers=self.tenant.headers, json_body={"text": text},
        )  # fmt: skip


@pytest.fixture
async def chat(aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory) -> Chat:
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    return Chat(client, tenant, (await created.json())["data"]["id"])


async def refused_with_503(chat: Chat) -> None:
    """Post a message and check it is refused before any stream starts, as `unavailable`."""
    response = await chat.client.post(
        f"/api/chats/{chat.id}/messages", json={"text": "hello"}, headers=chat.tenant.headers
    )
    assert response.status == 503
    assert (await response.json())["error"]["code"] == "unavailable"


def failing(exc: errors.LookoutError) -> Any:
    async def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


async def test_a_message_refused_because_redis_is_down_does_not_lock_the_chat(
    chat: Chat, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "last_id", failing(REDIS_DOWN))

    await refused_with_503(chat)
    assert await repo.chat_busy_until(db, chat_id=uuid.UUID(chat.id)) is None


async def test_redis_failing_mid_stream_ends_the_stream_with_an_error_part(
    chat: Chat, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a chat whose event stream fails once the SSE response has started
    monkeypatch.setattr(events, "range_after", failing(REDIS_DOWN))

    # When a message is posted
    result = await chat.say("hello")
    await asyncio.gather(*chat.client.app[appkeys.TURNS])  # the turn itself goes on: let it end

    # Then the stream (already 200) ends cleanly: an error part naming the outage, then [DONE]
    # (it used to carry a second HTTP response inside the open stream)
    assert result.status == 200
    assert result.parts == [
        {"type": "error", "code": "unavailable", "errorText": REDIS_DOWN.message}
    ]
    assert result.events[-1][1] == "[DONE]"


async def test_postgres_failing_as_the_turn_starts_is_a_503_with_nothing_stored(
    chat: Chat, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a database that fails the turn's first write (the lease with the question)
    monkeypatch.setattr(repo, "acquire_chat_lease", failing(DATABASE_DOWN))

    # When a message is posted, the client hears why before any stream starts
    await refused_with_503(chat)

    # And no question is left without its turn, and the chat is free
    chat_id, workspace_id = uuid.UUID(chat.id), chat.tenant.workspace.id
    stored = await repo.list_chat_messages(
        db, chat_id=chat_id, workspace_id=workspace_id, after_seq=0, limit=10
    )
    assert stored == []
    assert await repo.chat_busy_until(db, chat_id=chat_id) is None


async def test_an_answer_whose_write_meets_an_outage_is_stored_once_the_database_is_back(
    chat: Chat, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a database that is away when the turn stores its answer (with the release), once
    release_chat_lease = repo.release_chat_lease
    calls: list[int] = []

    async def away_once(*args: Any, **kwargs: Any) -> bool:
        calls.append(1)
        if len(calls) == 1:
            raise DATABASE_DOWN
        return await release_chat_lease(*args, **kwargs)

    monkeypatch.setattr(repo, "release_chat_lease", away_once)
    monkeypatch.setattr(lease, "RELEASE_RETRY_S", 0.05)

    # When a message is posted
    result = await chat.say("hello")

    # Then the turn finishes, its question and answer are both stored (the retry wrote the
    # answer), and the chat is free
    assert result.status == 200 and result.parts[-1]["type"] == "finish", result.parts
    chat_id, workspace_id = uuid.UUID(chat.id), chat.tenant.workspace.id
    stored = await repo.list_chat_messages(
        db, chat_id=chat_id, workspace_id=workspace_id, after_seq=0, limit=10
    )
    assert [m.role for m in stored] == ["user", "assistant"] and len(calls) == 2
    assert await repo.chat_busy_until(db, chat_id=chat_id) is None
    # And so is the state the next turn reads (written with the answer, by the same retry)
    saved = "SELECT count(*) FROM checkpoints WHERE thread_id = $1"
    assert await db.fetchval(saved, chat.id) == 1


async def test_an_answer_streamed_through_a_redis_outage_is_stored_and_streamed_to_its_end(
    chat: Chat, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the turn's stream writes failing for longer than the Redis client's own retries
    publish_many = events.publish_many
    away: list[float] = []  # until when: 1.5 s from the turn's first write (a loaded machine
    refused: list[int] = []  # may take longer than that to reach it after the post)

    async def restarting(*args: Any) -> list[str]:
        if not away:
            away.append(asyncio.get_running_loop().time() + 1.5)
        if asyncio.get_running_loop().time() < away[0]:
            refused.append(len(args[3]))
            raise REDIS_DOWN
        return await publish_many(*args)

    monkeypatch.setattr(events, "publish_many", restarting)

    # When a message is posted
    result = await chat.say("hello")

    # Then the stream carries the whole turn once Redis is back, ending with its finish
    assert refused, "the outage did not meet the turn"
    assert result.status == 200 and result.parts[0]["type"] == "start", result.parts
    assert result.parts[-1]["type"] == "finish", result.parts
    assert [p["type"] for p in result.parts].count("start") == 1
    # And the answer is stored, and the chat is free
    chat_id, workspace_id = uuid.UUID(chat.id), chat.tenant.workspace.id
    stored = await repo.list_chat_messages(
        db, chat_id=chat_id, workspace_id=workspace_id, after_seq=0, limit=10
    )
    assert [m.role for m in stored] == ["user", "assistant"]
    assert await repo.chat_busy_until(db, chat_id=chat_id) is None
