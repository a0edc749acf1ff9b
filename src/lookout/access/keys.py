"""API key text: `lk_` + 32 random bytes, stored only as SHA-256 with a display prefix."""

from __future__ import annotations

import collections
import hashlib
import secrets
import time
import uuid
from typing import Generic, TypeVar

T = TypeVar("T")

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
    return f"lookout:key-revoked:{key_id}"


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
