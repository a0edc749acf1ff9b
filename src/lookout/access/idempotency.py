"""Idempotency-Key: the first response to a key is replayed for 24 hours, without running
anything again. A key belongs to who sent it (the API key, or the signed-in user) in one
workspace, and to one request (method, path and body): the same key for another request is a
conflict, and so is a replay while the first request still runs."""

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


@dataclasses.dataclass(frozen=True)
class Scope:
    """Whose key it is: the workspace, the sender (`Principal.actor`) and the key itself."""

    workspace_id: uuid.UUID
    subject: str
    key: str

    def args(self) -> dict[str, Any]:
        return {"workspace_id": self.workspace_id, "subject": self.subject, "key": self.key}


async def begin(db: asyncpg.Pool, scope: Scope, *, fingerprint: str) -> Replay | None:
    """Claim the key (None: go ahead), or the stored first answer to replay."""
    if await repo.claim_idempotency_key(db, fingerprint=fingerprint, **scope.args()):
        return None
    record = await repo.get_idempotency_key(db, **scope.args())
    if record is None or record.fingerprint != fingerprint:
        raise errors.Conflict(
            "This Idempotency-Key was already used for a different request (another body or "
            "address); use a new key for a new request.",
            idempotency_key=scope.key,
        )
    if record.status is None or record.response is None:
        raise errors.Conflict(
            "A request with this Idempotency-Key is still running; retry in a moment to get "
            "its answer.",
            idempotency_key=scope.key,
            retry_after=1,
        )
    return Replay(status=record.status, body=record.response)


async def finish(db: asyncpg.Pool, scope: Scope, *, status: int, body: dict[str, Any]) -> None:
    """Remember the answer to replay (or free the key when the answer says "try again")."""
    error = body.get("error") or {}
    if error.get("code") in _NOT_REPLAYED:
        await release(db, scope)
        return
    await repo.store_idempotent_response(db, status=status, response=body, **scope.args())


async def release(db: asyncpg.Pool, scope: Scope) -> None:
    """Free a key whose request ended with no answer to remember."""
    await repo.release_idempotency_key(db, **scope.args())
