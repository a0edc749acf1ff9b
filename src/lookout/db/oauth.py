"""Typed repo functions for the OAuth tables (migration 0010): clients, codes, grants, tokens."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

from lookout.db import repo
from lookout.db.repo import Executor, Row


@dataclasses.dataclass(frozen=True)
class Client(Row):
    client_id: str
    secret_hash: bytes | None = dataclasses.field(repr=False)
    metadata: dict[str, Any]
    kind: str
    created_at: dt.datetime
    fetched_at: dt.datetime
    last_used_at: dt.datetime | None


@dataclasses.dataclass(frozen=True)
class Code(Row):
    code_hash: bytes = dataclasses.field(repr=False)
    client_id: str
    user_id: uuid.UUID
    workspace_id: uuid.UUID
    redirect_uri: str
    scope: str
    resource: str
    code_challenge: str


@dataclasses.dataclass(frozen=True)
class RefreshedToken(Row):
    """The pair a refresh token belonged to, spent by this refresh."""

    id: uuid.UUID
    grant_id: uuid.UUID
    scope: str
    client_id: str
    workspace_id: uuid.UUID
    user_id: uuid.UUID
    resource: str


@dataclasses.dataclass(frozen=True)
class AccessToken(Row):
    id: uuid.UUID
    grant_id: uuid.UUID
    scope: str
    access_expires_at: dt.datetime
    client_id: str
    workspace_id: uuid.UUID
    user_id: uuid.UUID
    resource: str
    role: str


@dataclasses.dataclass(frozen=True)
class TokenRef(Row):
    id: uuid.UUID
    grant_id: uuid.UUID
    client_id: str


@dataclasses.dataclass(frozen=True)
class Grant(Row):
    """A connected agent, as the workspace's Settings list it."""

    id: uuid.UUID
    client_id: str
    client_name: str | None
    client_uri: str | None
    client_kind: str
    scope: str
    granted_by: str
    created_at: dt.datetime
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None


def _client(row: Any) -> Client | None:
    return Client.from_row(row)  # the pool decodes jsonb


async def insert_client(
    db: Executor,
    *,
    client_id: str,
    secret_hash: bytes | None,
    metadata: dict[str, Any],
    kind: str = "registered",
) -> Client:
    row = await repo.fetchrow(db, "insert_oauth_client", client_id, secret_hash, metadata, kind)
    client = _client(row)
    assert client is not None
    return client


async def upsert_metadata_client(
    db: Executor, *, client_id: str, metadata: dict[str, Any]
) -> Client | None:
    """None when `client_id` is already a dynamically registered client's."""
    row = await repo.fetchrow(db, "upsert_oauth_metadata_client", client_id, metadata)
    return _client(row)


async def get_client(db: Executor, *, client_id: str) -> Client | None:
    return _client(await repo.fetchrow(db, "get_oauth_client", client_id))


async def touch_client(db: Executor, *, client_id: str) -> None:
    await repo.execute(db, "touch_oauth_client", client_id)


async def insert_code(
    db: Executor,
    *,
    code_hash: bytes,
    client_id: str,
    user_id: uuid.UUID,
    workspace_id: uuid.UUID,
    redirect_uri: str,
    scope: str,
    resource: str,
    code_challenge: str,
    expires_at: dt.datetime,
) -> None:
    await repo.execute(
        db,
        "insert_oauth_code",
        code_hash,
        client_id,
        user_id,
        workspace_id,
        redirect_uri,
        scope,
        resource,
        code_challenge,
        expires_at,
    )


async def consume_code(db: Executor, *, code_hash: bytes, client_id: str) -> Code | None:
    return Code.from_row(await repo.fetchrow(db, "consume_oauth_code", code_hash, client_id))


async def get_used_code_grant(db: Executor, *, code_hash: bytes) -> uuid.UUID | None:
    grant_id: uuid.UUID | None = await repo.fetchval(db, "get_used_oauth_code_grant", code_hash)
    return grant_id


async def set_code_grant(db: Executor, *, code_hash: bytes, grant_id: uuid.UUID) -> None:
    await repo.execute(db, "set_oauth_code_grant", code_hash, grant_id)


async def upsert_grant(
    db: Executor,
    *,
    client_id: str,
    workspace_id: uuid.UUID,
    user_id: uuid.UUID,
    scope: str,
    resource: str,
) -> uuid.UUID:
    grant_id: uuid.UUID = await repo.fetchval(
        db, "upsert_oauth_grant", client_id, workspace_id, user_id, scope, resource
    )
    return grant_id


async def insert_token(
    db: Executor,
    *,
    grant_id: uuid.UUID,
    access_hash: bytes,
    refresh_hash: bytes | None,
    scope: str,
    access_expires_at: dt.datetime,
    refresh_expires_at: dt.datetime | None,
) -> uuid.UUID:
    token_id: uuid.UUID = await repo.fetchval(
        db,
        "insert_oauth_token",
        grant_id,
        access_hash,
        refresh_hash,
        scope,
        access_expires_at,
        refresh_expires_at,
    )
    return token_id


async def consume_refresh_token(db: Executor, *, refresh_hash: bytes) -> RefreshedToken | None:
    row = await repo.fetchrow(db, "consume_oauth_refresh_token", refresh_hash)
    return RefreshedToken.from_row(row)


async def get_spent_refresh_grant(db: Executor, *, refresh_hash: bytes) -> uuid.UUID | None:
    grant_id: uuid.UUID | None = await repo.fetchval(
        db, "get_spent_oauth_refresh_grant", refresh_hash
    )
    return grant_id


async def find_access_token(db: Executor, *, access_hash: bytes) -> AccessToken | None:
    return AccessToken.from_row(await repo.fetchrow(db, "find_oauth_access_token", access_hash))


async def find_token_for_revocation(db: Executor, *, token_hash: bytes) -> TokenRef | None:
    row = await repo.fetchrow(db, "find_oauth_token_for_revocation", token_hash)
    return TokenRef.from_row(row)


async def revoke_token(db: Executor, *, token_id: uuid.UUID) -> None:
    await repo.execute(db, "revoke_oauth_token", token_id)


async def revoke_grant(
    db: Executor, *, grant_id: uuid.UUID, workspace_id: uuid.UUID | None = None
) -> None:
    await repo.execute(db, "revoke_oauth_grant", grant_id, workspace_id)


async def touch_grant(db: Executor, *, grant_id: uuid.UUID) -> None:
    await repo.execute(db, "touch_oauth_grant", grant_id)


async def list_grants(db: Executor, *, workspace_id: uuid.UUID) -> list[Grant]:
    rows = await repo.fetch(db, "list_oauth_grants", workspace_id)
    return [grant for row in rows if (grant := Grant.from_row(row))]


async def get_grant(db: Executor, *, grant_id: uuid.UUID, workspace_id: uuid.UUID) -> Grant | None:
    return Grant.from_row(await repo.fetchrow(db, "get_oauth_grant", grant_id, workspace_id))


async def delete_expired(db: Executor, *, unused_client_days: int) -> dict[str, int]:
    """Drop dead codes and tokens, and clients nobody uses; counts per kind."""

    def count(status: str) -> int:
        return int(status.rsplit(" ", 1)[-1])

    return {
        "oauth_codes": count(await repo.execute(db, "delete_expired_oauth_codes")),
        "oauth_tokens": count(await repo.execute(db, "delete_expired_oauth_tokens")),
        "oauth_clients": count(
            await repo.execute(db, "delete_unused_oauth_clients", unused_client_days)
        ),
    }
