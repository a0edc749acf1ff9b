"""Password hashing with argon2id; hashing is CPU-heavy, so it runs off the event loop."""

from __future__ import annotations

import asyncio
import functools

import argon2

from lookout.schema import accounts as account_schema

_hasher = argon2.PasswordHasher()
MIN_LENGTH = account_schema.PASSWORD_MIN_LENGTH
MAX_LENGTH = account_schema.PASSWORD_MAX_LENGTH


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the email is unknown, so a miss costs what a wrong password costs.
    Made on first use: hashing it at import took ~0.4 s of every process's start."""
    return _hasher.hash("lookout-dummy-password")


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher.hash, password)


def _verify(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(password_hash or _dummy_hash(), password)
    except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
        return False


async def verify_password(password_hash: str | None, password: str) -> bool:
    """Constant-ish time whether or not the user exists."""
    ok = await asyncio.to_thread(_verify, password_hash, password)
    return ok and password_hash is not None
