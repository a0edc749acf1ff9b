"""A workspace's API keys: list (any member), create and revoke (signed-in editors and owners)."""

from __future__ import annotations

import dataclasses
import uuid

import asyncpg
from aiohttp import web

from lookout import appkeys, errors
from lookout.access import accounts, auth, principals
from lookout.db import repo
from lookout.routes import auth as auth_routes
from lookout.routes import common
from lookout.schema import accounts as schema


async def list_keys(request: web.Request) -> web.Response:
    principal = await auth.authenticate(request)
    found = await repo.list_api_keys(request.app[appkeys.DB], workspace_id=principal.workspace_id)
    return common.ok(request, {"keys": schema.ApiKeySchema(many=True).dump(found)})


async def create_key(request: web.Request) -> web.Response:
    principal = await auth.authenticate(request)
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
    principal = await auth.authenticate(request)
    require_manager(principal)
    revoked = await revoke(request.app[appkeys.DB], principal, requested_key(request))
    return common.ok(request, {"key": schema.ApiKeySchema().dump(revoked)})


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
