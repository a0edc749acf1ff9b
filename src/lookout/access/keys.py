"""API key text: `lk_` + 32 random bytes, stored only as SHA-256 with a display prefix."""

from __future__ import annotations

import hashlib
import secrets

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
