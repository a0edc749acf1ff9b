"""A workspace's API keys: list (any member), create and revoke (signed-in editors and owners)."""

from __future__ import annotations

import dataclasses
import uuid

from aiohttp import web

from lookout import appkeys, errors
from lookout.access import accounts, keys
from lookout.routes import auth as auth_routes
from lookout.routes import authn, common
from lookout.schema import accounts as schema


async def list_keys(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await accounts.list_keys(request.app[appkeys.DB], principal)
    return common.ok(request, {"keys": schema.ApiKeySchema(many=True).dump(found)})


async def create_key(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    keys.require_manager(principal)
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
    keys.require_manager(principal)
    revoked = await accounts.revoke_key(request.app[appkeys.DB], principal, requested_key(request))
    await keys.announce_revocation(request.app[appkeys.REDIS], revoked.id)
    return common.ok(request, {"key": schema.ApiKeySchema().dump(revoked)})


def requested_key(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["key_id"])
    except ValueError:
        raise errors.NotFound("No such API key.") from None
