"""Web page sessions: sign in with a password (throttled), end one session, end all of a user's.

A session's token is made in lookout.access.auth (new_session); the cookie that carries it is
the door's (lookout.routes.auth).
"""

from __future__ import annotations

import uuid

import asyncpg
import redis.asyncio as aioredis

from lookout import errors
from lookout.access import auth, passwords, throttle
from lookout.db import repo

WRONG_CREDENTIALS = "Wrong email or password."


async def sign_in(
    db: asyncpg.Pool, redis: aioredis.Redis, *, email: str, password: str, ip: str
) -> repo.User:
    """The user, when the password is right and the throttle allows another attempt."""
    await throttle.attempt(redis, email=email, ip=ip)
    user = await repo.get_user_by_email(db, email=email)
    # Verified even when the email is unknown, so both failures cost and answer the same.
    right = await passwords.verify_password(user.password_hash if user else None, password)
    if user is None or not right:
        raise errors.Unauthenticated(WRONG_CREDENTIALS)
    await throttle.succeeded(redis, email=email, ip=ip)
    return user


async def end(db: asyncpg.Pool, token: str) -> None:
    """Forget the session `token` names (nothing if it names none)."""
    await repo.delete_session(db, token_hash=auth.session_digest(token))


async def end_all(db: asyncpg.Pool, user_id: uuid.UUID) -> int:
    """End every session of the user (every browser, every copied cookie); how many ended."""
    return await repo.delete_user_sessions(db, user_id=user_id)
