"""Authentication: API keys and session tokens, resolved to a workspace Principal.

Layer 3 (access): no aiohttp. Reading them from a request (the Bearer header, the cookie, the
Origin check, the workspace in the path) is the door's: lookout.routes.authn."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import uuid

import asyncpg

from lookout import errors
from lookout.access import keys
from lookout.access.principals import Principal
from lookout.db import repo
from lookout.settings import Settings

COOKIE = "lookout_session"
WORKSPACE_HEADER = "X-Lookout-Workspace"


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


def allowed_origins(settings: Settings) -> set[str]:
    """The origins of our own pages: LOOKOUT_PUBLIC_URL's and LOOKOUT_ALLOWED_ORIGINS. Never the
    request's own Host header, which whoever sends the request chooses."""
    extra = {origin.rstrip("/").lower() for origin in settings.allowed_origins}
    return {settings.public_origin, *extra}


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


async def session_user(db: asyncpg.Pool, settings: Settings, token: str) -> repo.User | None:
    """The user of a live session: not expired, not idle past LOOKOUT_SESSION_IDLE_HOURS."""
    idle_s = settings.session_idle_hours * 3600
    return await repo.get_session_user(db, token_hash=session_digest(token), idle_s=idle_s)


def origin_allowed(settings: Settings, origin: str) -> bool:
    return origin.rstrip("/").lower() in allowed_origins(settings)
