"""API key text: `lk_` + 32 random bytes, stored only as SHA-256 with a display prefix."""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid

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
