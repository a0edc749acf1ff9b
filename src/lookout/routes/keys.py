"""A workspace's API keys: list (any member), create and revoke (signed-in editors and owners)."""

from __future__ import annotations

import dataclasses
import uuid

import asyncpg
import redis.asyncio as aioredis
from aiohttp import web

from lookout import appkeys, errors, redis_client
from lookout.access import accounts, keys, principals
from lookout.db import repo
from lookout.routes import auth as auth_routes
from lookout.routes import authn, common
from lookout.schema import accounts as schema


async def list_keys(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await repo.list_api_keys(request.app[appkeys.DB], workspace_id=principal.workspace_id)
    return common.ok(request, {"keys": schema.ApiKeySchema(many=True).dump(found)})


async def create_key(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    require_manager(principal)
    body = await auth_routes.read_body(request, schema.NewKeySchema())
    new = await accounts.create_key(
        request.app[appkeys.DB],
        workspace_id=principal.workspace_id,
        created_by=principal.user_id,
        **body,
    )
    data = schema.CreatedKeySchema().dump({**dataclasses.asdict(new.key), "key": new.text})
    return common.ok(request, data, status=201)


async def revoke_key(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    require_manager(principal)
    revoked = await revoke(request.app[appkeys.DB], principal, requested_key(request))
    await announce_revocation(request.app[appkeys.REDIS], revoked.id)
    return common.ok(request, {"key": schema.ApiKeySchema().dump(revoked)})


async def announce_revocation(redis: aioredis.Redis, key_id: uuid.UUID) -> None:
    """Tell every web process, whose caches may still hold the key, to refuse it from now on.

    Repeated on every DELETE of a revoked key, so retrying a DELETE that failed here finishes it.
    """
    try:
        await redis.set(keys.revoked_marker(key_id), "1", ex=keys.REVOKED_MARKER_TTL_S)
    except redis_client.UNREACHABLE as exc:
        raise errors.Unavailable(
            "The key is revoked, but Redis could not be told, so a web process may accept it "
            f"for up to {keys.CACHE_TTL_S:.0f} s; repeat this request to finish revoking."
        ) from exc


def require_manager(principal: principals.Principal) -> None:
    """Keys make keys nothing: a leaked key must not be able to mint or revoke others."""
    if principal.kind != "session":
        raise errors.Forbidden(
            "API keys cannot create or revoke API keys; sign in to Lookout to manage them."
        )
    principal.require("editor")


def requested_key(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["key_id"])
    except ValueError:
        raise errors.NotFound("No such API key.") from None


async def revoke(
    db: asyncpg.Pool, principal: principals.Principal, key_id: uuid.UUID
) -> repo.ApiKey:
    """Revoke at once; revoking a revoked key again is not an error (DELETE is idempotent)."""
    await repo.revoke_api_key(db, key_id=key_id, workspace_id=principal.workspace_id)
    key = await repo.get_api_key(db, key_id=key_id, workspace_id=principal.workspace_id)
    if key is None:
        raise errors.NotFound("No such API key.")
    return key
