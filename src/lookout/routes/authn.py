"""Authentication read from the request: the Bearer API key, the session cookie, the Origin
check of cookie-authenticated writes, the workspace named by the path (or header).

What a key or a session stands for is decided in lookout.access.auth; this module only reads
the request and hands it the values.
"""

from __future__ import annotations

import urllib.parse
import uuid

from aiohttp import web

from lookout import appkeys, errors
from lookout.access import auth
from lookout.access.principals import Principal
from lookout.db import repo

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def bearer_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise errors.Unauthenticated("Send the API key as 'Authorization: Bearer lk_...'.")
    return token.strip()


def session_token(request: web.Request) -> str | None:
    """The session cookie's value, when it can be one."""
    token = request.cookies.get(auth.COOKIE)
    return token if token and len(token) <= 100 else None


async def session_user(request: web.Request) -> repo.User | None:
    """The user of the request's live session, if it has one."""
    token = session_token(request)
    if token is None:
        return None
    return await auth.session_user(request.app[appkeys.DB], request.app[appkeys.SETTINGS], token)


def origin_allowed(request: web.Request, origin: str) -> bool:
    return auth.origin_allowed(request.app[appkeys.SETTINGS], origin)


def check_origin(request: web.Request) -> None:
    """Cookie-authenticated writes must come from our own pages (CSRF)."""
    if request.method in _SAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if origin is None:
        referer = urllib.parse.urlsplit(request.headers.get("Referer", ""))
        origin = f"{referer.scheme}://{referer.netloc}" if referer.netloc else None
    if origin is None or not origin_allowed(request, origin):
        raise errors.Forbidden("This request did not come from a Lookout page (Origin check).")


def requested_workspace(request: web.Request) -> uuid.UUID | None:
    raw = request.match_info.get("ws") or request.headers.get(auth.WORKSPACE_HEADER)
    if raw is None:
        return None
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise errors.NotFound("No such workspace.") from None


async def authenticate(request: web.Request, *, checks_revocation: bool = False) -> Principal:
    """Bearer API key first, else the session cookie; Unauthenticated when neither is valid.

    `checks_revocation`: the caller refuses a key whose revocation marker is set before it acts
    (it rate-limits through `invoke`), so the key may come from this process's cache.
    """
    db = request.app[appkeys.DB]
    token = bearer_token(request)
    if token is not None:
        cache = request.app[appkeys.KEY_CACHE] if checks_revocation else None
        principal = await auth.key_principal(db, request.app[appkeys.KEY_USAGE], token, cache)
        wanted = requested_workspace(request)
        if wanted is not None and wanted != principal.workspace_id:
            raise errors.NotFound("No such workspace.")
        return principal
    user = await session_user(request)
    if user is None:
        raise errors.Unauthenticated()
    check_origin(request)
    return await auth.user_principal(db, user, requested_workspace(request))
