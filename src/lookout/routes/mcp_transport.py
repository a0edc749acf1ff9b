"""The Streamable HTTP transport on aiohttp: stateless, JSON responses, POST only.

Checks run cheapest and most telling first: Origin (403), the Bearer key (401), the protocol
version header (400), content type (415), Accept (406), body size (413); then the JSON-RPC
message itself. Every refusal is a JSON-RPC error body (id null) at the HTTP status the spec asks.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from lookout import appkeys, errors, mediatypes, middleware
from lookout.access import auth, oauth_tokens
from lookout.access.principals import Principal
from lookout.mcp import server
from lookout.routes import authn

logger = logging.getLogger(__name__)

PATH = "/mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource"
VERSION_HEADER = "MCP-Protocol-Version"


class Refused(Exception):
    """The HTTP request is refused before any JSON-RPC message is read."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


async def handle(request: web.Request) -> web.StreamResponse:
    """POST answers one JSON-RPC message; other methods are 405 (no SSE stream, no sessions)."""
    try:
        if request.method != "POST":
            allow = {"Allow": "POST"}
            raise Refused(405, "This MCP endpoint only accepts POST (no SSE stream).", allow)
        return await _post(request)
    except Refused as exc:
        body = server.RpcError(server.INVALID_REQUEST, exc.message).body(None)
        return web.json_response(body, status=exc.status, headers=exc.headers)
    except errors.LookoutError as exc:
        # The database or Redis failed while checking the key: say so, at its status.
        body = server.RpcError(server.INTERNAL_ERROR, exc.message).body(None)
        return web.json_response(body, status=exc.status)


async def _post(request: web.Request) -> web.StreamResponse:
    from mcp.types import jsonrpc  # mcp loads at the first MCP request, not at start

    _check_origin(request)
    principal, scopes = await _authenticate(request)
    version = _protocol_version(request)
    _check_content_type(request)
    _check_accept(request)
    try:
        message = server.parse(await _body(request))
    except server.RpcError as exc:
        return web.json_response(exc.body(None), status=exc.http_status)
    if not isinstance(message, jsonrpc.JSONRPCRequest):
        return web.Response(status=202)  # notifications and responses need no answer
    ctx = server.Context(
        services=appkeys.services(request.app),
        principal=principal,
        request_id=middleware.request_id(request),
        version=version,
        scopes=scopes,
    )
    status, body = await server.answer(message, ctx)
    return web.json_response(body, status=status)


def _check_origin(request: web.Request) -> None:
    """Browsers send Origin; a page on another site must not drive a user's MCP session."""
    origin = request.headers.get("Origin")
    if origin is not None and not authn.origin_allowed(request, origin):
        raise Refused(403, f"Origin {origin} is not allowed to use this MCP endpoint.")


async def _authenticate(request: web.Request) -> tuple[Principal, frozenset[str] | None]:
    """The caller and, for an OAuth access token, the scopes it was granted (None: a key)."""
    challenge = f'Bearer resource_metadata="{metadata_url(request)}"'
    db, usage = request.app[appkeys.DB], request.app[appkeys.KEY_USAGE]
    try:
        token = authn.bearer_token(request)
        if token is None:
            raise errors.Unauthenticated(
                "Sign in (OAuth) or send a Lookout API key: 'Authorization: Bearer lk_...'."
            )
        if oauth_tokens.is_access_token(token):
            found = await oauth_tokens.bearer(db, usage, token, base_url(request) + PATH)
            return found.principal, found.scopes
        return await auth.key_principal(db, usage, token), None
    except errors.Unauthenticated as exc:
        if "Authorization" in request.headers:
            challenge += ', error="invalid_token"'
        raise Refused(401, exc.message, {"WWW-Authenticate": challenge}) from None


def _protocol_version(request: web.Request) -> str:
    version = request.headers.get(VERSION_HEADER)
    if version is None:
        return server.HEADERLESS_VERSION
    if version not in server.SUPPORTED_VERSIONS:
        supported = ", ".join(server.SUPPORTED_VERSIONS)
        raise Refused(400, f"Unsupported {VERSION_HEADER} {version!r}; supported: {supported}.")
    return version


def _check_content_type(request: web.Request) -> None:
    if mediatypes.media_type(request.headers.get("Content-Type")) != "application/json":
        raise Refused(415, "Send the JSON-RPC message as Content-Type: application/json.")


def _check_accept(request: web.Request) -> None:
    accept = request.headers.get("Accept", "*/*").lower()
    if not any(kind in accept for kind in ("application/json", "application/*", "*/*")):
        raise Refused(406, "This endpoint answers application/json; say so in Accept.")


async def _body(request: web.Request) -> bytes:
    limit = request.app[appkeys.SETTINGS].max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise Refused(413, f"The body is larger than {limit} bytes, the limit.")
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise Refused(413, f"The body is larger than {limit} bytes, the limit.") from None


def base_url(request: web.Request) -> str:
    """LOOKOUT_PUBLIC_URL: never the request's Host, which would let a forged Host header
    point a client's token at another server."""
    return request.app[appkeys.SETTINGS].public_url.rstrip("/")


def metadata_url(request: web.Request) -> str:
    """RFC 9728: the metadata of the resource at /mcp lives at the well-known path + /mcp."""
    return base_url(request) + METADATA_PATH + PATH


def resource_metadata(request: web.Request) -> dict[str, Any]:
    """RFC 9728 protected resource metadata: Lookout's own authorization server (at the same
    base URL, routes/oauth.py) issues the tokens, besides its API keys."""
    base = base_url(request)
    return {
        "resource": base + PATH,
        "authorization_servers": [base],
        "scopes_supported": ["verbs:read", "jobs:read"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Lookout",
        "resource_documentation": base + "/v1/docs",
    }
