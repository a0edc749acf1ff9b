"""Idempotency-Key: the first response to a key is replayed for 24 hours."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.db import repo

MAX_KEY_LENGTH = 255
# Answers that say "try again" are not remembered: the retry deserves a real attempt.
_NOT_REPLAYED = {"rate_limited", "unavailable", "busy"}


@dataclasses.dataclass(frozen=True)
class Replay:
    status: int
    body: dict[str, Any]


def fingerprint(method: str, path: str, body: object) -> str:
    canonical = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isprintable():
        raise errors.InvalidInput(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable characters."
        )
    return key


async def begin(
    db: asyncpg.Pool, *, workspace_id: uuid.UUID, key: str, fingerprint: str
) -> Replay | None:
    """Claim the key (None: go ahead), or the stored first answer to replay."""
    if await repo.claim_idempotency_key(
        db, workspace_id=workspace_id, key=key, fingerprint=fingerprint
    ):
        return None
    record = await repo.get_idempotency_key(db, workspace_id=workspace_id, key=key)
    if record is None or record.fingerprint != fingerprint:
        raise errors.Conflict(
            "This Idempotency-Key was already used for a different request; use a new key."
        )
    if record.status is None or record.response is None:
        raise errors.Conflict(
            "A request with this Idempotency-Key is still running; retry in a moment."
        )
    return Replay(status=record.status, body=record.response)


async def finish(
    db: asyncpg.Pool, *, workspace_id: uuid.UUID, key: str, status: int, body: dict[str, Any]
) -> None:
    error = body.get("error") or {}
    if error.get("code") in _NOT_REPLAYED:
        await repo.release_idempotency_key(db, workspace_id=workspace_id, key=key)
        return
    await repo.store_idempotent_response(
        db, workspace_id=workspace_id, key=key, status=status, response=body
    )
