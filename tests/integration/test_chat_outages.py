"""A chat turn refused by an outage leaves its chat free for the next message."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import pytest

from lookout import app, errors
from lookout.chat import events
from lookout.db import repo
from lookout.settings import Settings
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
