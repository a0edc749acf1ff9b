"""A chat turn refused or cut short by an outage: the client hears why, the chat stays free."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

import asyncpg
import pytest

from lookout import app, appkeys, errors
from lookout.chat import events
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


def failing(exc: errors.LookoutError) -> Any:
    async def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


async def test_a_message_refused_because_redis_is_down_does_not_lock_the_chat(
    chat: Chat, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "last_id", failing(REDIS_DOWN))
    response = await chat.client.post(
        f"/api/chats/{chat.id}/messages", json={"text": "hello"}, headers=chat.tenant.headers
    )

    assert response.status == 503
    assert (await response.json())["error"]["code"] == "unavailable"
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


async def test_postgres_failing_before_the_turn_starts_tells_the_listener_why(
    chat: Chat, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn whose first write (the question) fails: the database went away
    monkeypatch.setattr(repo, "insert_chat_message", failing(DATABASE_DOWN))

    # When a message is posted
    result = await chat.say("hello")

    # Then the listener hears `unavailable` at once (not "interrupted" after an idle check),
    # and the chat is free again
    assert result.status == 200
    assert [(p["type"], p.get("code")) for p in result.parts] == [("error", "unavailable")]
    assert await repo.chat_busy_until(db, chat_id=uuid.UUID(chat.id)) is None
