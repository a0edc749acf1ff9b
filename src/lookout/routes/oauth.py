"""The OAuth 2.1 door: authorization server metadata, registration, token, revocation, the
consent page's API, and a workspace's connected agents."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import uuid
from typing import Any

from aiohttp import web
from authlib.common import security

from lookout import appkeys, errors, mediatypes
from lookout.access import accounts, keys, oauth_flow, ratelimit
from lookout.access import oauth_models as models
from lookout.access.oauth_server import Answer, Context, HttpRequest, metadata
from lookout.db import repo
from lookout.routes import auth as auth_routes
from lookout.routes import authn, common
from lookout.routes import mcp_transport as transport
from lookout.schema import oauth as schema

REGISTRATION_MAX_BYTES = 16 * 1024
# Browser-based MCP clients call these from their own origin; none of them reads a cookie.
CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "600",
}


def issuer(request: web.Request) -> str:
    """LOOKOUT_PUBLIC_URL as the issuer; OAuth 2.1 needs it https (or loopback / localhost)."""
    base = transport.base_url(request)
    if not security.is_secure_transport(base):
        raise errors.ProviderNotConfigured(
            f"Signing agents in with OAuth needs an https LOOKOUT_PUBLIC_URL (or a loopback "
            f"one); it is {base}. API keys still work on /mcp."
        )
    return base


def context(request: web.Request) -> Context:
    base = issuer(request)
    return Context(
        services=appkeys.services(request.app),
        issuer=base,
        resource=base + transport.PATH,
        loop=asyncio.get_running_loop(),
    )


def answer(result: Answer) -> web.Response:
    headers = {**CORS, **dict(result.headers)}
    headers.setdefault("Cache-Control", "no-store")
    text = result.body if isinstance(result.body, str) else json.dumps(result.body)
    if not isinstance(result.body, str):
        headers["Content-Type"] = "application/json"
    return web.Response(status=result.status, text=text, headers=headers)


def oauth_error(status: int, error: str, description: str, **headers: str) -> web.Response:
    body = {"error": error, "error_description": description}
    return answer(Answer(status, body, list(headers.items())))


async def preflight(request: web.Request) -> web.Response:
    return web.Response(status=204, headers=CORS)


async def server_metadata(request: web.Request) -> web.Response:
    return answer(Answer(200, metadata(issuer(request)), []))


async def _form(request: web.Request) -> HttpRequest:
    # Read here, not with request.post(): aiohttp's parse of a malformed Content-Type raises
    # (mediatypes.py). A form is ASCII; anything else is replaced, never a 500.
    urlencoded = mediatypes.media_type(request.headers.get("Content-Type")).endswith("urlencoded")
    body = (await request.read()).rstrip().decode("utf-8", "replace") if urlencoded else ""
    return HttpRequest(
        method=request.method,
        path_qs=request.path_qs,
        headers=dict(request.headers),
        form=urllib.parse.parse_qsl(body, keep_blank_values=True, errors="replace"),
    )


async def token(request: web.Request) -> web.Response:
    return answer(await oauth_flow.token(context(request), await _form(request)))


async def revoke(request: web.Request) -> web.Response:
    return answer(await oauth_flow.revoke(context(request), await _form(request)))


async def register(request: web.Request) -> web.Response:
    """RFC 7591 registration, open to anyone, so limited per address."""
    settings = request.app[appkeys.SETTINGS]
    ip = auth_routes.client_address(request, settings.forwarded_hops)
    try:
        await ratelimit.enforce(
            request.app[appkeys.REDIS],
            subject=f"oauth-register:{ip}",
            limit=settings.oauth_register_per_minute,
        )
    except errors.RateLimited as exc:
        wait = str(exc.retry_after or 60)
        return oauth_error(429, "slow_down", exc.message, **{"Retry-After": wait})
    if (request.content_length or 0) > REGISTRATION_MAX_BYTES:
        return oauth_error(413, "invalid_client_metadata", "The client metadata is too large.")
    raw = await request.read()
    try:
        body = json.loads(raw) if len(raw) <= REGISTRATION_MAX_BYTES else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        return oauth_error(400, "invalid_client_metadata", "Send the metadata as a JSON object.")
    http = HttpRequest("POST", request.path_qs, dict(request.headers), json=body)
    return answer(await oauth_flow.register(context(request), http))


def _authorization_request(query: str) -> HttpRequest:
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, max_num_fields=40)
    except ValueError:
        raise errors.InvalidInput("This authorization request has too many parameters.") from None
    return HttpRequest("GET", "/authorize?" + query, {}, query=pairs)


async def _signed_in(request: web.Request) -> repo.User:
    user = await authn.session_user(request)
    if user is None:
        raise errors.Unauthenticated("Sign in to Lookout to connect this agent.")
    return user


def _problem(exc: oauth_flow.Problem) -> errors.InvalidInput:
    return errors.InvalidInput(
        f"This connection request cannot go on: {exc.description}",
        oauth_error=exc.error,
        redirect_to=exc.redirect_to,
    )


async def consent_request(request: web.Request) -> web.Response:
    """GET /api/oauth/authorize?<the authorization request>: what the consent page shows."""
    user = await _signed_in(request)
    query = request.query_string
    if len(query) > schema.MAX_QUERY:
        raise errors.InvalidInput("This authorization request is too long.")
    try:
        found = await oauth_flow.pending(context(request), _authorization_request(query))
    except oauth_flow.Problem as exc:
        raise _problem(exc) from None
    workspaces = await accounts.user_workspaces(request.app[appkeys.DB], user.id)
    return common.ok(request, _describe(found, user, workspaces))


def _describe(
    found: oauth_flow.Pending, user: repo.User, workspaces: list[repo.MemberWorkspace]
) -> dict[str, Any]:
    return {
        "client": {
            "id": found.client_id,
            "name": found.client_name,
            "uri": found.client_uri,
            "verified_by_url": found.client_kind == "metadata_document",
        },
        "redirect_host": found.redirect_host,
        "resource": found.resource,
        "scopes": [{"name": s, "description": models.SCOPES[s]} for s in found.scopes],
        "user": {"email": user.email},
        "workspaces": [{"id": str(w.id), "name": w.name, "role": w.role} for w in workspaces],
    }


async def consent_decision(request: web.Request) -> web.Response:
    """POST /api/oauth/authorize: allow or deny; answers where to send the browser."""
    user = await _signed_in(request)
    authn.check_origin(request)
    body = await auth_routes.read_body(request, schema.DecisionSchema())
    ctx = context(request)
    http = _authorization_request(body["query"])
    grantor = None
    try:
        if body["allow"]:
            found = await oauth_flow.pending(ctx, http)
            if body["workspace_id"] is None:
                raise errors.InvalidInput("Pick the workspace the agent works in.")
            grantor = await oauth_flow.check_decision(
                ctx.services.db, user.id, body["workspace_id"], body["scopes"], found.scopes
            )
        location = await oauth_flow.decide(ctx, http, grantor)
    except oauth_flow.Problem as exc:
        raise _problem(exc) from None
    return common.ok(request, {"redirect_to": location, "allowed": grantor is not None})


async def list_grants(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await oauth_flow.list_grants(request.app[appkeys.DB], principal)
    return common.ok(request, {"agents": schema.GrantSchema(many=True).dump(found)})


async def revoke_grant(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    keys.require_manager(principal)
    try:
        grant_id = uuid.UUID(request.match_info["grant_id"])
    except ValueError:
        raise errors.NotFound("No such connected agent.") from None
    found = await oauth_flow.revoke_grant(request.app[appkeys.DB], principal, grant_id)
    return common.ok(request, {"agent": schema.GrantSchema().dump(found)})


def setup(app: web.Application, page: Any) -> None:
    """The OAuth routes; `page` serves the web app shell at /authorize (the consent view)."""
    app.router.add_get("/.well-known/oauth-authorization-server", server_metadata)
    app.router.add_get("/authorize", page)
    for path, handler in (("/token", token), ("/revoke", revoke), ("/register", register)):
        app.router.add_post(path, handler)
        app.router.add_route("OPTIONS", path, preflight)
    app.router.add_route("OPTIONS", "/.well-known/oauth-authorization-server", preflight)
    app.router.add_get("/api/oauth/authorize", consent_request)
    app.router.add_post("/api/oauth/authorize", consent_decision)
    app.router.add_get("/api/workspaces/{ws}/oauth-agents", list_grants)
    app.router.add_delete("/api/workspaces/{ws}/oauth-agents/{grant_id}", revoke_grant)
