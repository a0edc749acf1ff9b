"""Authentication: API keys (Bearer) and session cookies, resolved to a workspace Principal."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import urllib.parse
import uuid

import asyncpg
from aiohttp import web

from lookout import appkeys, errors
from lookout.access import keys
from lookout.access.principals import Principal
from lookout.db import repo
from lookout.settings import Settings

COOKIE = "lookout_session"
WORKSPACE_HEADER = "X-Lookout-Workspace"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def bearer_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise errors.Unauthenticated("Send the API key as 'Authorization: Bearer lk_...'.")
    return token.strip()


async def key_principal(
    db: asyncpg.Pool,
    usage: keys.KeyUsage,
    token: str,
    cache: keys.KeyCache[Principal] | None = None,
) -> Principal:
    """The principal of an API key; a wrong, revoked or malformed key is Unauthenticated, and
    so is one whose creator left the workspace. It acts with its creator's role now, within
    its scope (`keys.role_of`).

    With `cache`, a key this process found valid in the last `keys.CACHE_TTL_S` is not looked
    up again: only for callers that check `keys.revoked_marker` before acting (a verb call's
    rate limit does), so a revoked key is still refused at once; what it spends is checked
    against the key's standing now by the reservation itself (credits.reserve).
    """
    if not keys.looks_like_key(token):
        raise errors.Unauthenticated("This API key is not valid or has been revoked.")
    digest = keys.digest(token)
    principal = cache.get(digest) if cache is not None else None
    if principal is None:
        candidates = await repo.find_keys_by_prefix(db, prefix=keys.display_prefix(token))
        found = next((k for k in candidates if hmac.compare_digest(k.key_hash, digest)), None)
        if found is None:
            raise errors.Unauthenticated("This API key is not valid or has been revoked.")
        role = keys.role_of(found.creator_role, found.scopes)
        if role is None:
            raise errors.Unauthenticated(keys.CREATOR_LEFT)
        principal = Principal(
            kind="api_key",
            workspace_id=found.workspace_id,
            role=role,
            key_id=found.id,
            rate_limit_per_minute=found.rate_limit_per_minute,
            scope=keys.scope_of(found.scopes),
        )
        if cache is not None:
            cache.put(digest, principal)
    assert principal.key_id is not None
    if usage.due(principal.key_id):
        await repo.touch_api_key(db, key_id=principal.key_id)
    return principal


def session_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


async def new_session(db: asyncpg.Pool, settings: Settings, user_id: uuid.UUID) -> str:
    """Store a new session (hashed) and return the cookie value."""
    token = secrets.token_urlsafe(32)
    expires_at = dt.datetime.now(dt.UTC) + dt.timedelta(days=settings.session_days)
    await repo.insert_session(
        db, token_hash=session_digest(token), user_id=user_id, expires_at=expires_at
    )
    return token


def session_token(request: web.Request) -> str | None:
    """The session cookie's value, when it can be one."""
    token = request.cookies.get(COOKIE)
    return token if token and len(token) <= 100 else None


async def session_user(request: web.Request) -> repo.User | None:
    """The user of a live session: not expired, not idle past LOOKOUT_SESSION_IDLE_HOURS."""
    token = session_token(request)
    if token is None:
        return None
    idle_s = request.app[appkeys.SETTINGS].session_idle_hours * 3600
    return await repo.get_session_user(
        request.app[appkeys.DB], token_hash=session_digest(token), idle_s=idle_s
    )


def allowed_origins(settings: Settings) -> set[str]:
    """The origins of our own pages: LOOKOUT_PUBLIC_URL's and LOOKOUT_ALLOWED_ORIGINS. Never the
    request's own Host header, which whoever sends the request chooses."""
    extra = {origin.rstrip("/").lower() for origin in settings.allowed_origins}
    return {settings.public_origin, *extra}


def origin_allowed(request: web.Request, origin: str) -> bool:
    return origin.rstrip("/").lower() in allowed_origins(request.app[appkeys.SETTINGS])


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


async def user_principal(
    db: asyncpg.Pool, user: repo.User, workspace_id: uuid.UUID | None
) -> Principal:
    """A signed-in user acting in a workspace they belong to (else NotFound)."""
    workspace_id = workspace_id or await repo.get_first_workspace(db, user_id=user.id)
    role = None
    if workspace_id is not None:
        role = await repo.get_role(db, workspace_id=workspace_id, user_id=user.id)
    if workspace_id is None or role is None:
        raise errors.NotFound("No such workspace.")
    return Principal(kind="session", workspace_id=workspace_id, role=role, user_id=user.id)


def requested_workspace(request: web.Request) -> uuid.UUID | None:
    raw = request.match_info.get("ws") or request.headers.get(WORKSPACE_HEADER)
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
        principal = await key_principal(db, request.app[appkeys.KEY_USAGE], token, cache)
        wanted = requested_workspace(request)
        if wanted is not None and wanted != principal.workspace_id:
            raise errors.NotFound("No such workspace.")
        return principal
    user = await session_user(request)
    if user is None:
        raise errors.Unauthenticated()
    check_origin(request)
    return await user_principal(db, user, requested_workspace(request))
