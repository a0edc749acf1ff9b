"""Factories for the account tests: browser-like clients, signed-up users, members, API keys.

Import the `*_fixture` functions into a test module; the fixtures are named without the suffix.
"""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from lookout import app, devservices
from lookout.db import repo
from lookout.settings import Settings

PASSWORD = "correct horse battery"

NewClient = Callable[..., Awaitable[TestClient[Any, Any]]]


@dataclasses.dataclass(frozen=True)
class Member:
    """A signed-in user: their client holds the session cookie and sends our own Origin."""

    client: TestClient[Any, Any]
    user_id: uuid.UUID
    email: str
    password: str
    workspace_id: uuid.UUID

    def keys_url(self, workspace_id: uuid.UUID | None = None) -> str:
        return f"/api/workspaces/{workspace_id or self.workspace_id}/keys"


@pytest.fixture(name="new_client")
def new_client_fixture(aiohttp_client: Any, settings: Settings) -> NewClient:
    """A client of a fresh app whose every request carries the app's own Origin, as a browser on
    a Lookout page would: cookie-authenticated writes need it."""

    async def make(**changes: Any) -> TestClient[Any, Any]:
        configured = settings.replace(**changes)
        server = TestServer(app.create_app(configured), port=devservices.free_port())
        client: TestClient[Any, Any] = await aiohttp_client(
            server, headers={"Origin": configured.public_origin}
        )
        return client

    return make


@pytest.fixture(name="signed_up")
def signed_up_fixture(new_client: NewClient) -> Callable[..., Awaitable[Member]]:
    """Sign a new user up through the API; returns them signed in, in their own workspace."""
    numbers = itertools.count(1)

    async def make(email: str | None = None, password: str = PASSWORD) -> Member:
        email = email or f"user{next(numbers)}-{uuid.uuid4().hex[:6]}@example.com"
        client = await new_client()
        response = await client.post(
            "/api/auth/signup", json={"email": email, "password": password}
        )
        assert response.status == 201, await response.text()
        data = (await response.json())["data"]
        return Member(
            client=client,
            user_id=uuid.UUID(data["user"]["id"]),
            email=email,
            password=password,
            workspace_id=uuid.UUID(data["workspace"]["id"]),
        )

    return make


@pytest.fixture(name="member_of")
def member_of_fixture(
    signed_up: Callable[..., Awaitable[Member]], db: asyncpg.Pool
) -> Callable[..., Awaitable[Member]]:
    """A new signed-in user who also belongs to `workspace_id` with `role`, acting there."""

    async def make(workspace_id: uuid.UUID, role: str) -> Member:
        member = await signed_up()
        await repo.add_membership(db, workspace_id=workspace_id, user_id=member.user_id, role=role)
        return dataclasses.replace(member, workspace_id=workspace_id)

    return make


@pytest.fixture(name="api_key")
def api_key_fixture() -> Callable[..., Awaitable[dict[str, Any]]]:
    """Create a key through the API as `member`; returns the created key (its text in "key")."""

    async def make(member: Member, name: str = "ci", **extra: Any) -> dict[str, Any]:
        response = await member.client.post(member.keys_url(), json={"name": name, **extra})
        assert response.status == 201, await response.text()
        data: dict[str, Any] = (await response.json())["data"]
        return data

    return make


def bearer(key: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


async def error_of(response: aiohttp.ClientResponse, status: int, code: str) -> dict[str, Any]:
    """Assert the error envelope (status, code, request id) and return its error object."""
    body = await response.json()
    assert response.status == status, body
    assert body["ok"] is False and body["data"] is None
    assert body["error"]["code"] == code
    assert body["meta"]["request_id"] == response.headers["X-Request-Id"]
    error: dict[str, Any] = body["error"]
    return error


async def data_of(response: aiohttp.ClientResponse, status: int = 200) -> Any:
    body = await response.json()
    assert response.status == status, body
    assert body["ok"] is True and body["error"] is None
    assert body["meta"]["request_id"] == response.headers["X-Request-Id"]
    return body["data"]
