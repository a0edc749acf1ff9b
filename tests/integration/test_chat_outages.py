"""A chat turn refused by an outage leaves its chat free for the next message."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import pytest

from lookout import app, appkeys, errors
from lookout.chat import events
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import sse
from tests.integration.factories import TenantFactory, tenant_factory

__all__ = ["tenant_factory"]


async def test_a_message_refused_because_redis_is_down_does_not_lock_the_chat(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat_id = (await created.json())["data"]["id"]

    async def redis_down(*args: Any, **kwargs: Any) -> str:
        raise errors.Unavailable("The event stream is unavailable; retry shortly.")

    monkeypatch.setattr(events, "last_id", redis_down)
    response = await client.post(
        f"/api/chats/{chat_id}/messages", json={"text": "hello"}, headers=tenant.headers
    )

    assert response.status == 503
    assert (await response.json())["error"]["code"] == "unavailable"
    assert await repo.chat_busy_until(db, chat_id=uuid.UUID(chat_id)) is None


async def test_redis_failing_mid_stream_ends_the_stream_with_an_error_part(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a chat whose event stream fails once the SSE response has started
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat_id = (await created.json())["data"]["id"]

    async def redis_gone(*args: Any, **kwargs: Any) -> list[Any]:
        raise errors.Unavailable("The event stream is unavailable; retry shortly.")

    monkeypatch.setattr(events, "range_after", redis_gone)

    # When a message is posted
    result = await sse.stream(
        str(client.make_url("")).rstrip("/"), "POST", f"/api/chats/{chat_id}/messages",
        headers=tenant.headers, json_body={"text": "hello"},
    )  # fmt: skip

    await asyncio.gather(*client.app[appkeys.TURNS])  # the turn itself goes on: let it end

    # Then the stream (already 200) ends cleanly: an error part naming the outage, then [DONE]
    # (it used to carry a second HTTP response inside the open stream)
    assert result.status == 200
    assert result.parts == [
        {"type": "error", "code": "unavailable",
         "errorText": "The event stream is unavailable; retry shortly."}
    ]  # fmt: skip
    assert result.events[-1][1] == "[DONE]"


async def test_postgres_failing_before_the_turn_starts_tells_the_listener_why(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a turn whose first write (the question) fails: the database went away
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat_id = (await created.json())["data"]["id"]

    async def database_gone(*args: Any, **kwargs: Any) -> None:
        raise errors.Unavailable("The database is unavailable; retry shortly.")

    monkeypatch.setattr(repo, "insert_chat_message", database_gone)

    # When a message is posted
    result = await sse.stream(
        str(client.make_url("")).rstrip("/"), "POST", f"/api/chats/{chat_id}/messages",
        headers=tenant.headers, json_body={"text": "hello"},
    )  # fmt: skip

    # Then the listener hears `unavailable` at once (not "interrupted" after an idle check),
    # and the chat is free again
    assert result.status == 200
    assert [(p["type"], p.get("code")) for p in result.parts] == [("error", "unavailable")]
    assert await repo.chat_busy_until(db, chat_id=uuid.UUID(chat_id)) is None
