"""Typed repo functions: one per query in queries.sql, keyword arguments, frozen rows."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any, Self, TypeAlias

import asyncpg

from lookout.db import pool, queries

Executor: TypeAlias = asyncpg.Pool | asyncpg.Connection


@dataclasses.dataclass(frozen=True)
class Row:
    @classmethod
    def from_row(cls, row: asyncpg.Record | None) -> Self | None:
        if row is None:
            return None
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in row.items() if key in names})


@dataclasses.dataclass(frozen=True)
class User(Row):
    id: uuid.UUID
    email: str
    password_hash: str = dataclasses.field(repr=False)
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class Workspace(Row):
    id: uuid.UUID
    name: str
    owner_id: uuid.UUID
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class MemberWorkspace(Row):
    id: uuid.UUID
    name: str
    owner_id: uuid.UUID
    role: str
    balance: int
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class ApiKey(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    created_by: uuid.UUID | None
    name: str
    prefix: str
    scopes: list[str]
    rate_limit_per_minute: int | None
    created_at: dt.datetime
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None


async def fetchrow(db: Executor, name: str, *args: Any) -> asyncpg.Record | None:
    with pool.translate_errors():
        return await db.fetchrow(queries.get(name), *args)


async def fetch(db: Executor, name: str, *args: Any) -> list[asyncpg.Record]:
    with pool.translate_errors():
        return list(await db.fetch(queries.get(name), *args))


async def fetchval(db: Executor, name: str, *args: Any) -> Any:
    with pool.translate_errors():
        return await db.fetchval(queries.get(name), *args)


async def execute(db: Executor, name: str, *args: Any) -> str:
    with pool.translate_errors():
        return str(await db.execute(queries.get(name), *args))


async def ping(db: Executor) -> bool:
    return bool(await fetchval(db, "ping"))


async def insert_user(db: Executor, *, email: str, password_hash: str) -> User:
    user = User.from_row(await fetchrow(db, "insert_user", email, password_hash))
    assert user is not None
    return user


async def get_user_by_email(db: Executor, *, email: str) -> User | None:
    return User.from_row(await fetchrow(db, "get_user_by_email", email))


async def get_user(db: Executor, *, user_id: uuid.UUID) -> User | None:
    return User.from_row(await fetchrow(db, "get_user", user_id))


async def insert_workspace(db: Executor, *, name: str, owner_id: uuid.UUID) -> Workspace:
    workspace = Workspace.from_row(await fetchrow(db, "insert_workspace", name, owner_id))
    assert workspace is not None
    return workspace


async def get_workspace(db: Executor, *, workspace_id: uuid.UUID) -> Workspace | None:
    return Workspace.from_row(await fetchrow(db, "get_workspace", workspace_id))


async def add_membership(
    db: Executor, *, workspace_id: uuid.UUID, user_id: uuid.UUID, role: str
) -> None:
    await execute(db, "add_membership", workspace_id, user_id, role)


async def get_role(db: Executor, *, workspace_id: uuid.UUID, user_id: uuid.UUID) -> str | None:
    role = await fetchval(db, "get_membership", workspace_id, user_id)
    return str(role) if role is not None else None


async def list_user_workspaces(db: Executor, *, user_id: uuid.UUID) -> list[MemberWorkspace]:
    rows = await fetch(db, "list_user_workspaces", user_id)
    return [workspace for row in rows if (workspace := MemberWorkspace.from_row(row))]


async def grant_credits(
    db: Executor, *, workspace_id: uuid.UUID, request_id: str, amount: int, actor: str
) -> int | None:
    """Grant credits once per request id; None when that grant was already recorded."""
    balance = await fetchval(db, "grant_credits", workspace_id, request_id, amount, actor)
    return int(balance) if balance is not None else None


async def get_balance(db: Executor, *, workspace_id: uuid.UUID) -> int | None:
    balance = await fetchval(db, "get_balance", workspace_id)
    return int(balance) if balance is not None else None


async def insert_api_key(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    created_by: uuid.UUID | None,
    name: str,
    key_hash: bytes,
    prefix: str,
    rate_limit_per_minute: int | None,
) -> ApiKey:
    row = await fetchrow(
        db,
        "insert_api_key",
        workspace_id,
        created_by,
        name,
        key_hash,
        prefix,
        rate_limit_per_minute,
    )
    key = ApiKey.from_row(row)
    assert key is not None
    return key


async def delete_expired(db: Executor) -> dict[str, int]:
    """Drop expired sessions, idempotency records and finished jobs; counts per kind."""
    return {
        "sessions": _count(await execute(db, "delete_expired_sessions")),
        "idempotency_keys": _count(await execute(db, "delete_expired_idempotency_keys")),
        "jobs": _count(await execute(db, "delete_expired_jobs")),
    }


def _count(status: str) -> int:
    """Rows touched, from a command status such as 'DELETE 3'."""
    return int(status.rsplit(" ", 1)[-1])


@dataclasses.dataclass(frozen=True)
class KeyPrincipal(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    rate_limit_per_minute: int | None
    key_hash: bytes = dataclasses.field(repr=False)


async def find_keys_by_prefix(db: Executor, *, prefix: str) -> list[KeyPrincipal]:
    rows = await fetch(db, "find_keys_by_prefix", prefix)
    return [key for row in rows if (key := KeyPrincipal.from_row(row))]


async def touch_api_key(db: Executor, *, key_id: uuid.UUID) -> None:
    await execute(db, "touch_api_key", key_id)


async def list_api_keys(db: Executor, *, workspace_id: uuid.UUID) -> list[ApiKey]:
    rows = await fetch(db, "list_api_keys", workspace_id)
    return [key for row in rows if (key := ApiKey.from_row(row))]


async def revoke_api_key(db: Executor, *, key_id: uuid.UUID, workspace_id: uuid.UUID) -> bool:
    return await fetchval(db, "revoke_api_key", key_id, workspace_id) is not None


async def insert_session(
    db: Executor, *, token_hash: bytes, user_id: uuid.UUID, expires_at: dt.datetime
) -> None:
    await execute(db, "insert_session", token_hash, user_id, expires_at)


async def get_session_user(db: Executor, *, token_hash: bytes) -> User | None:
    return User.from_row(await fetchrow(db, "get_session_user", token_hash))


async def delete_session(db: Executor, *, token_hash: bytes) -> None:
    await execute(db, "delete_session", token_hash)


async def get_first_workspace(db: Executor, *, user_id: uuid.UUID) -> uuid.UUID | None:
    workspace_id = await fetchval(db, "get_first_workspace", user_id)
    return workspace_id if isinstance(workspace_id, uuid.UUID) else None
