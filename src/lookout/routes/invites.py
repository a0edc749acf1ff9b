"""A workspace's invites (LOOKOUT_SIGNUP=invite): create, list and revoke, by its owners."""

from __future__ import annotations

import uuid

from aiohttp import web

from lookout import appkeys, errors
from lookout.access import signup
from lookout.routes import auth as auth_routes
from lookout.routes import authn, common
from lookout.schema import accounts as schema


async def create_invite(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    principal.require("owner")
    body = await auth_routes.read_body(request, schema.NewInviteSchema())
    made = await signup.create_invite(
        request.app[appkeys.DB], request.app[appkeys.SETTINGS], principal, **body
    )
    data = {"invite": made.invite, "token": made.token, "url": made.url}
    return common.ok(request, schema.CreatedInviteSchema().dump(data), status=201)


async def list_invites(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await signup.list_invites(request.app[appkeys.DB], principal)
    return common.ok(request, {"invites": schema.InviteSchema(many=True).dump(found)})


async def revoke_invite(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    await signup.revoke_invite(request.app[appkeys.DB], principal, _invite_id(request))
    return common.ok(request, {"revoked": True})


def _invite_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["invite_id"])
    except ValueError:
        raise errors.NotFound("No such invite in this workspace.") from None
