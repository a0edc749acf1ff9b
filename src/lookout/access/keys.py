"""API keys: `lk_` + 32 random bytes, stored only as SHA-256 with a display prefix; what a key
may do (its creator's current role, within the scope chosen when it was made)."""

from __future__ import annotations

import collections
import hashlib
import secrets
import time
import uuid
from typing import Generic, TypeVar

import redis.asyncio as aioredis

from lookout import errors, redis_client, redis_keys
from lookout.access import principals
from lookout.db import repo
from lookout.schema import accounts as account_schema

T = TypeVar("T")

# A key's scope (see lookout.schema.accounts, which owns the names a client may send).
FULL = account_schema.SCOPE_FULL
READ_ONLY = account_schema.SCOPE_READ_ONLY
SCOPES = account_schema.SCOPES
scope_of = account_schema.scope_of
CREATOR_LEFT = (
    "This API key's creator is no longer a member of this workspace, so the key no longer "
    "works; ask a member to make a new one."
)

PREFIX = "lk_"
_PREFIX_CHARS = 8


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def display_prefix(key: str) -> str:
    return key[: len(PREFIX) + _PREFIX_CHARS]


def looks_like_key(text: str) -> bool:
    return text.startswith(PREFIX) and 20 <= len(text) <= 100


def role_of(creator_role: str | None, scopes: list[str]) -> str | None:
    """The role a key acts with: its creator's now, capped by its scope; None if they left."""
    if creator_role is None:
        return None
    ceiling = "viewer" if scope_of(scopes) == READ_ONLY else "editor"
    return min(creator_role, ceiling, key=principals.ROLES.index)


def refusal(standing: repo.KeyStanding | None) -> errors.LookoutError | None:
    """Why a key may not spend credits now, or None when it may."""
    if standing is None or standing.revoked_at is not None:
        return errors.Unauthenticated("This API key is not valid or has been revoked.")
    role = role_of(standing.creator_role, standing.scopes)
    if role is None:
        return errors.Unauthenticated(CREATOR_LEFT)
    if role == "viewer":
        return principals.key_forbidden(scope_of(standing.scopes), "editor")
    return None


# last_used_at is written at most this often per key and process, not on every request.
TOUCH_INTERVAL_S = 60.0


class KeyUsage:
    """Remembers when this process last wrote each key's last_used_at."""

    def __init__(self) -> None:
        self._written: dict[uuid.UUID, float] = {}

    def due(self, key_id: uuid.UUID) -> bool:
        now = time.monotonic()
        if now - self._written.get(key_id, -TOUCH_INTERVAL_S) < TOUCH_INTERVAL_S:
            return False
        self._written[key_id] = now
        return True


# A valid key's principal is reused for this long by the process that looked it up. Revocation
# still takes effect at once: it leaves a marker in Redis (`revoked_marker`) that the rate-limit
# script checks in the round trip every verb call makes anyway, kept longer than any cache entry.
CACHE_TTL_S = 30.0
CACHE_SIZE = 10_000
REVOKED_MARKER_TTL_S = 4 * int(CACHE_TTL_S)


def revoked_marker(key_id: uuid.UUID) -> str:
    return redis_keys.key_revoked(key_id)


class KeyCache(Generic[T]):
    """What this process recently found for a key digest: bounded, oldest entries dropped."""

    def __init__(self, ttl_s: float = CACHE_TTL_S, size: int = CACHE_SIZE) -> None:
        self._ttl_s, self._size = ttl_s, size
        self._entries: collections.OrderedDict[bytes, tuple[float, T]] = collections.OrderedDict()

    def get(self, digest: bytes) -> T | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if time.monotonic() - entry[0] >= self._ttl_s:
            del self._entries[digest]
            return None
        return entry[1]

    def put(self, digest: bytes, value: T) -> None:
        self._entries.pop(digest, None)
        self._entries[digest] = (time.monotonic(), value)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


async def announce_revocation(redis: aioredis.Redis, key_id: uuid.UUID) -> None:
    """Tell every web process, whose caches may still hold the key, to refuse it from now on.

    Repeated on every DELETE of a revoked key, so retrying a DELETE that failed here finishes it.
    """
    try:
        await redis.set(revoked_marker(key_id), "1", ex=REVOKED_MARKER_TTL_S)
    except redis_client.UNREACHABLE as exc:
        raise errors.Unavailable(
            "The key is revoked, but Redis could not be told, so a web process may accept it "
            f"for up to {CACHE_TTL_S:.0f} s; repeat this request to finish revoking."
        ) from exc


def require_manager(principal: principals.Principal) -> None:
    """Keys make keys nothing: a leaked key must not be able to mint or revoke others."""
    if principal.kind != "session":
        raise errors.Forbidden(
            "API keys cannot create or revoke API keys; sign in to Lookout to manage them."
        )
    principal.require("editor")
