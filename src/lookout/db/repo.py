"""Typed repo functions: one per query in queries.sql, keyword arguments, frozen rows."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, Self, TypeAlias, TypeVar

import asyncpg

from lookout.db import pool, queries

Executor: TypeAlias = asyncpg.Pool | asyncpg.Connection
NEVER = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)  # before any row of ours


@dataclasses.dataclass(frozen=True)
class Row:
    @classmethod
    def from_row(cls, row: asyncpg.Record | None) -> Self | None:
        if row is None:
            return None
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in row.items() if key in names})


@dataclasses.dataclass(frozen=True)
class User(Row):
    id: uuid.UUID
    email: str
    password_hash: str = dataclasses.field(repr=False)
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class Workspace(Row):
    id: uuid.UUID
    name: str
    owner_id: uuid.UUID
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class MemberWorkspace(Row):
    id: uuid.UUID
    name: str
    owner_id: uuid.UUID
    role: str
    balance: int
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class ApiKey(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    created_by: uuid.UUID | None
    name: str
    prefix: str
    scopes: list[str]
    rate_limit_per_minute: int | None
    created_at: dt.datetime
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None


@contextlib.asynccontextmanager
async def transaction(db: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    """A connection inside a transaction, with driver errors translated."""
    with pool.translate_errors():
        async with db.acquire() as conn, conn.transaction():
            yield conn


async def fetchrow(db: Executor, name: str, *args: Any) -> asyncpg.Record | None:
    with pool.translate_errors():
        return await db.fetchrow(queries.get(name), *args)


async def fetch(db: Executor, name: str, *args: Any) -> list[asyncpg.Record]:
    with pool.translate_errors():
        return list(await db.fetch(queries.get(name), *args))


async def fetchval(db: Executor, name: str, *args: Any) -> Any:
    with pool.translate_errors():
        return await db.fetchval(queries.get(name), *args)


async def execute(db: Executor, name: str, *args: Any) -> str:
    with pool.translate_errors():
        return str(await db.execute(queries.get(name), *args))


async def ping(db: Executor) -> bool:
    return bool(await fetchval(db, "ping"))


async def insert_user(db: Executor, *, email: str, password_hash: str) -> User:
    user = User.from_row(await fetchrow(db, "insert_user", email, password_hash))
    assert user is not None
    return user


async def get_user_by_email(db: Executor, *, email: str) -> User | None:
    return User.from_row(await fetchrow(db, "get_user_by_email", email))


async def get_user(db: Executor, *, user_id: uuid.UUID) -> User | None:
    return User.from_row(await fetchrow(db, "get_user", user_id))


async def insert_workspace(db: Executor, *, name: str, owner_id: uuid.UUID) -> Workspace:
    workspace = Workspace.from_row(await fetchrow(db, "insert_workspace", name, owner_id))
    assert workspace is not None
    return workspace


async def get_workspace(db: Executor, *, workspace_id: uuid.UUID) -> Workspace | None:
    return Workspace.from_row(await fetchrow(db, "get_workspace", workspace_id))


async def add_membership(
    db: Executor, *, workspace_id: uuid.UUID, user_id: uuid.UUID, role: str
) -> None:
    await execute(db, "add_membership", workspace_id, user_id, role)


async def get_role(db: Executor, *, workspace_id: uuid.UUID, user_id: uuid.UUID) -> str | None:
    role = await fetchval(db, "get_membership", workspace_id, user_id)
    return str(role) if role is not None else None


async def list_user_workspaces(db: Executor, *, user_id: uuid.UUID) -> list[MemberWorkspace]:
    rows = await fetch(db, "list_user_workspaces", user_id)
    return [workspace for row in rows if (workspace := MemberWorkspace.from_row(row))]


async def grant_credits(
    db: Executor, *, workspace_id: uuid.UUID, request_id: str, amount: int, actor: str
) -> int | None:
    """Grant credits once per request id; None when that grant was already recorded."""
    balance = await fetchval(db, "grant_credits", workspace_id, request_id, amount, actor)
    return int(balance) if balance is not None else None


async def get_balance(db: Executor, *, workspace_id: uuid.UUID) -> int | None:
    balance = await fetchval(db, "get_balance", workspace_id)
    return int(balance) if balance is not None else None


async def insert_api_key(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    created_by: uuid.UUID | None,
    name: str,
    key_hash: bytes,
    prefix: str,
    rate_limit_per_minute: int | None,
    scopes: list[str],
) -> ApiKey:
    row = await fetchrow(
        db,
        "insert_api_key",
        workspace_id,
        created_by,
        name,
        key_hash,
        prefix,
        rate_limit_per_minute,
        scopes,
    )
    key = ApiKey.from_row(row)
    assert key is not None
    return key


async def delete_expired(db: Executor) -> dict[str, int]:
    """Drop expired sessions, idempotency records and finished jobs; counts per kind."""
    return {
        "sessions": _count(await execute(db, "delete_expired_sessions")),
        "idempotency_keys": _count(await execute(db, "delete_expired_idempotency_keys")),
        "jobs": _count(await execute(db, "delete_expired_jobs")),
    }


def _count(status: str) -> int:
    """Rows touched, from a command status such as 'DELETE 3'."""
    return int(status.rsplit(" ", 1)[-1])


@dataclasses.dataclass(frozen=True)
class KeyPrincipal(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    rate_limit_per_minute: int | None
    key_hash: bytes = dataclasses.field(repr=False)
    created_by: uuid.UUID | None = None
    scopes: list[str] = dataclasses.field(default_factory=list)
    creator_role: str | None = None


async def find_keys_by_prefix(db: Executor, *, prefix: str) -> list[KeyPrincipal]:
    rows = await fetch(db, "find_keys_by_prefix", prefix)
    return [key for row in rows if (key := KeyPrincipal.from_row(row))]


@dataclasses.dataclass(frozen=True)
class KeyStanding(Row):
    revoked_at: dt.datetime | None
    scopes: list[str]
    creator_role: str | None


async def get_key_standing(
    db: Executor, *, key_id: uuid.UUID, workspace_id: uuid.UUID
) -> KeyStanding | None:
    return KeyStanding.from_row(await fetchrow(db, "get_key_standing", key_id, workspace_id))


async def touch_api_key(db: Executor, *, key_id: uuid.UUID) -> None:
    await execute(db, "touch_api_key", key_id)


async def list_api_keys(db: Executor, *, workspace_id: uuid.UUID) -> list[ApiKey]:
    rows = await fetch(db, "list_api_keys", workspace_id)
    return [key for row in rows if (key := ApiKey.from_row(row))]


async def revoke_api_key(db: Executor, *, key_id: uuid.UUID, workspace_id: uuid.UUID) -> bool:
    return await fetchval(db, "revoke_api_key", key_id, workspace_id) is not None


async def insert_session(
    db: Executor, *, token_hash: bytes, user_id: uuid.UUID, expires_at: dt.datetime
) -> None:
    await execute(db, "insert_session", token_hash, user_id, expires_at)


async def get_session_user(db: Executor, *, token_hash: bytes, idle_s: float) -> User | None:
    return User.from_row(await fetchrow(db, "get_session_user", token_hash, idle_s))


async def delete_session(db: Executor, *, token_hash: bytes) -> None:
    await execute(db, "delete_session", token_hash)


async def get_first_workspace(db: Executor, *, user_id: uuid.UUID) -> uuid.UUID | None:
    workspace_id = await fetchval(db, "get_first_workspace", user_id)
    return workspace_id if isinstance(workspace_id, uuid.UUID) else None


@dataclasses.dataclass(frozen=True)
class LedgerEntry(Row):
    request_id: str
    kind: str
    amount: int
    verb: str | None
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class VerbUsage(Row):
    verb: str
    calls: int
    credits: int


async def reserve_credits(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    request_id: str,
    amount: int,
    verb: str,
    actor: str,
    deadline: dt.datetime,
    key_id: uuid.UUID | None = None,
) -> int | None:
    """The balance after reserving; None when nothing was reserved: this ledger key had
    already reserved, or API key `key_id` may not spend now (see get_key_standing).

    Raises InsufficientCredits (from the balance CHECK) when the credits are not there.
    """
    args = (workspace_id, request_id, amount, verb, actor, deadline)
    if key_id is None:
        balance = await fetchval(db, "reserve_credits", *args)
    else:
        balance = await fetchval(db, "reserve_credits_for_key", *args, key_id)
    return int(balance) if balance is not None else None


async def close_reservation(
    db: Executor, *, workspace_id: uuid.UUID, request_id: str, kind: str, charged: int
) -> int | None:
    """Settle (kind='settle', charging `charged`) or refund (charged=0).

    Returns the credits given back, or None when the reservation was already closed.
    """
    row = await fetchrow(db, "close_reservation", workspace_id, request_id, kind, charged)
    return int(row["returned"]) if row is not None else None


async def write_ledger_together(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    reserves: Sequence[tuple[str, int, str, str, dt.datetime, uuid.UUID | None]],
    closes: Sequence[tuple[str, str, int]],
) -> tuple[dict[str, int], list[tuple[str, str, int]]]:
    """reserve_credits for each (request id, amount, verb, actor, deadline, API key or None) of
    `reserves` and close_reservation for each (request id, kind, charged) of `closes`, in one
    statement (either may be empty). Returns the balance after all of them by request id of
    each reservation taken (none for a ledger key seen before, asked twice, or a key that may
    not spend now), and (request id, kind, credits given back) of each close written (none for
    one already closed). Raises InsufficientCredits when what the reserves take is not there:
    nothing is written."""
    reserved = _columns(reserves, 6)
    closing = _columns(closes, 3)
    rows = await fetch(db, "write_ledger_together", workspace_id, *reserved, *closing)
    taken = {row["request_id"]: int(row["amount"]) for row in rows if row["kind"] == "reserve"}
    closed = [
        (row["request_id"], row["kind"], int(row["amount"]))
        for row in rows
        if row["kind"] != "reserve"
    ]
    return taken, closed


def _columns(rows: Sequence[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """`rows` as `width` columns, for unnest (none when there are no rows: zip gives nothing)."""
    columns = [list(column) for column in zip(*rows, strict=True)]
    return columns or [[] for _ in range(width)]


async def get_charge(db: Executor, *, workspace_id: uuid.UUID, request_id: str) -> int | None:
    row = await fetchrow(db, "get_charge", workspace_id, request_id)
    if row is None or not row["closed"]:
        return None
    return int(row["charged"])


async def get_reserved(db: Executor, *, workspace_id: uuid.UUID, request_id: str) -> int | None:
    """What the reservation under `request_id` took; None when there is none."""
    reserved = await fetchval(db, "get_reserved", workspace_id, request_id)
    return int(reserved) if reserved is not None else None


async def list_stale_reservations(
    db: Executor, *, limit: int, since: dt.datetime = NEVER
) -> list[tuple[uuid.UUID, str, dt.datetime]]:
    """(workspace, request id, deadline) of open reservations with a deadline in [since, now),
    oldest first."""
    rows = await fetch(db, "list_stale_reservations", limit, since)
    return [(row["workspace_id"], row["request_id"], row["deadline"]) for row in rows]


async def recent_ledger(db: Executor, *, workspace_id: uuid.UUID, limit: int) -> list[LedgerEntry]:
    rows = await fetch(db, "recent_ledger", workspace_id, limit)
    return [entry for row in rows if (entry := LedgerEntry.from_row(row))]


async def usage_by_verb(db: Executor, *, workspace_id: uuid.UUID, days: int) -> list[VerbUsage]:
    rows = await fetch(db, "usage_by_verb", workspace_id, days)
    return [usage for row in rows if (usage := VerbUsage.from_row(row))]


async def ledger_sum(db: Executor, *, workspace_id: uuid.UUID) -> int:
    return int(await fetchval(db, "ledger_sum", workspace_id))


@dataclasses.dataclass(frozen=True)
class Job(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    request_id: str
    verb: str
    input: dict[str, Any]
    principal: dict[str, Any]
    door: str
    status: str
    progress_done: int
    progress_total: int
    cancel_requested: bool
    attempts: int
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    credits_charged: int
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    expires_at: dt.datetime
    chat_id: uuid.UUID | None = None
    post_to_chat: bool = False

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed", "cancelled")


@dataclasses.dataclass(frozen=True)
class LostJob(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    request_id: str
    attempts: int
    status: str


@dataclasses.dataclass(frozen=True)
class IdempotencyRecord(Row):
    fingerprint: str
    status: int | None
    response: dict[str, Any] | None
    created_at: dt.datetime


async def insert_job(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    request_id: str,
    verb: str,
    input: dict[str, Any],
    principal: dict[str, Any],
    door: str,
    progress_total: int,
    ttl_hours: int,
) -> Job:
    row = await fetchrow(
        db, "insert_job", workspace_id, request_id, verb, input, principal, door,
        progress_total, ttl_hours,
    )  # fmt: skip
    job = Job.from_row(row)
    assert job is not None
    return job


async def get_job(db: Executor, *, job_id: uuid.UUID, workspace_id: uuid.UUID) -> Job | None:
    return Job.from_row(await fetchrow(db, "get_job", job_id, workspace_id))


async def get_job_for_worker(db: Executor, *, job_id: uuid.UUID) -> Job | None:
    return Job.from_row(await fetchrow(db, "get_job_for_worker", job_id))


async def claim_job(db: Executor, *, job_id: uuid.UUID, lease_s: float) -> Job | None:
    return Job.from_row(await fetchrow(db, "claim_job", job_id, lease_s))


async def job_progress(
    db: Executor, *, job_id: uuid.UUID, done: int, total: int, lease_s: float
) -> bool:
    """Record progress; True when a cancel has been requested."""
    return bool(await fetchval(db, "job_progress", job_id, done, total, lease_s))


async def job_cancel_requested(db: Executor, *, job_id: uuid.UUID) -> bool:
    return bool(await fetchval(db, "job_cancel_requested", job_id))


async def finish_job(
    db: Executor,
    *,
    job_id: uuid.UUID,
    status: str,
    result: dict[str, Any] | None,
    error: dict[str, Any] | None,
    credits_charged: int,
) -> bool:
    row = await fetchval(db, "finish_job", job_id, status, result, error, credits_charged)
    return row is not None


async def request_job_cancel(
    db: Executor, *, job_id: uuid.UUID, workspace_id: uuid.UUID
) -> str | None:
    """The job's status after the request, or None when it is not cancellable (or not ours)."""
    status = await fetchval(db, "request_job_cancel", job_id, workspace_id)
    return str(status) if status is not None else None


async def cancel_flagged_job(db: Executor, *, job_id: uuid.UUID) -> bool:
    return await fetchval(db, "cancel_flagged_job", job_id) is not None


async def list_lost_jobs(db: Executor, *, queued_grace_s: float) -> list[LostJob]:
    rows = await fetch(db, "list_lost_jobs", queued_grace_s)
    return [job for row in rows if (job := LostJob.from_row(row))]


async def requeue_job(db: Executor, *, job_id: uuid.UUID) -> bool:
    return await fetchval(db, "requeue_job", job_id) is not None


async def fail_lost_job(db: Executor, *, job_id: uuid.UUID, error: dict[str, Any]) -> bool:
    return await fetchval(db, "fail_lost_job", job_id, error) is not None


async def claim_idempotency_key(
    db: Executor, *, workspace_id: uuid.UUID, subject: str, key: str, fingerprint: str
) -> bool:
    claimed = await fetchval(db, "claim_idempotency_key", workspace_id, key, fingerprint, subject)
    return claimed is not None


async def get_idempotency_key(
    db: Executor, *, workspace_id: uuid.UUID, subject: str, key: str
) -> IdempotencyRecord | None:
    row = await fetchrow(db, "get_idempotency_key", workspace_id, key, subject)
    return IdempotencyRecord.from_row(row)


async def store_idempotent_response(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    subject: str,
    key: str,
    status: int,
    response: dict[str, Any],
) -> None:
    await execute(db, "store_idempotent_response", workspace_id, key, status, response, subject)


async def release_idempotency_key(
    db: Executor, *, workspace_id: uuid.UUID, subject: str, key: str
) -> None:
    await execute(db, "release_idempotency_key", workspace_id, key, subject)


async def extend_job_lease(db: Executor, *, job_id: uuid.UUID, lease_s: float) -> bool:
    """Extend the running job's lease; True when a cancel has been requested."""
    return bool(await fetchval(db, "extend_job_lease", job_id, lease_s))


async def get_api_key(db: Executor, *, key_id: uuid.UUID, workspace_id: uuid.UUID) -> ApiKey | None:
    return ApiKey.from_row(await fetchrow(db, "get_api_key", key_id, workspace_id))


@dataclasses.dataclass(frozen=True)
class McpConnector(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    name: str
    url: str  # what is shown: scheme + host (the whole URL of a connector made before 0006)
    url_sealed: bytes | None = dataclasses.field(repr=False)
    headers_encrypted: bytes | None = dataclasses.field(repr=False)
    enabled: bool
    created_at: dt.datetime


async def insert_mcp_connector(
    db: Executor,
    *,
    connector_id: uuid.UUID,
    workspace_id: uuid.UUID,
    name: str,
    url: str,
    url_sealed: bytes,
    headers_encrypted: bytes | None,
) -> McpConnector:
    row = await fetchrow(
        db,
        "insert_mcp_connector",
        connector_id,
        workspace_id,
        name,
        url,
        url_sealed,
        headers_encrypted,
    )
    connector = McpConnector.from_row(row)
    assert connector is not None
    return connector


async def list_mcp_connectors(db: Executor, *, workspace_id: uuid.UUID) -> list[McpConnector]:
    rows = await fetch(db, "list_mcp_connectors", workspace_id)
    return [connector for row in rows if (connector := McpConnector.from_row(row))]


async def get_mcp_connector(
    db: Executor, *, connector_id: uuid.UUID, workspace_id: uuid.UUID
) -> McpConnector | None:
    row = await fetchrow(db, "get_mcp_connector", connector_id, workspace_id)
    return McpConnector.from_row(row)


async def delete_mcp_connector(
    db: Executor, *, connector_id: uuid.UUID, workspace_id: uuid.UUID
) -> bool:
    return await fetchval(db, "delete_mcp_connector", connector_id, workspace_id) is not None


async def list_chat_connector_ids(db: Executor, *, workspace_id: uuid.UUID) -> set[uuid.UUID]:
    rows = await fetch(db, "list_chat_connector_ids", workspace_id)
    return {row["id"] for row in rows}


async def set_mcp_connector_chat_use(
    db: Executor, *, connector_id: uuid.UUID, workspace_id: uuid.UUID, chat_use: bool
) -> bool | None:
    """The flag as stored, or None when the workspace has no such connector."""
    found = await fetchval(db, "set_mcp_connector_chat_use", connector_id, workspace_id, chat_use)
    return None if found is None else bool(found)


@dataclasses.dataclass(frozen=True)
class Chat(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    created_by: uuid.UUID | None
    title: str
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class ChatMessage(Row):
    id: uuid.UUID
    chat_id: uuid.UUID
    seq: int
    role: str
    source: str
    parts: list[dict[str, Any]]
    run_id: uuid.UUID | None
    created_at: dt.datetime


async def insert_chat(
    db: Executor, *, workspace_id: uuid.UUID, created_by: uuid.UUID | None, title: str
) -> Chat:
    chat = Chat.from_row(await fetchrow(db, "insert_chat", workspace_id, created_by, title))
    assert chat is not None
    return chat


async def get_chat(db: Executor, *, chat_id: uuid.UUID, workspace_id: uuid.UUID) -> Chat | None:
    return Chat.from_row(await fetchrow(db, "get_chat", chat_id, workspace_id))


async def list_chats(
    db: Executor, *, workspace_id: uuid.UUID, limit: int, offset: int
) -> list[Chat]:
    rows = await fetch(db, "list_chats", workspace_id, limit, offset)
    return [chat for row in rows if (chat := Chat.from_row(row))]


async def rename_chat(
    db: Executor, *, chat_id: uuid.UUID, workspace_id: uuid.UUID, title: str
) -> Chat | None:
    return Chat.from_row(await fetchrow(db, "rename_chat", chat_id, workspace_id, title))


async def delete_chat(db: Executor, *, chat_id: uuid.UUID, workspace_id: uuid.UUID) -> bool:
    return await fetchval(db, "delete_chat", chat_id, workspace_id) is not None


@dataclasses.dataclass(frozen=True)
class NewMessage:
    """A chat message written with a lease change (a turn's opening or closing message)."""

    id: uuid.UUID
    role: str
    source: str
    parts: list[dict[str, Any]]
    run_id: uuid.UUID | None = None

    @staticmethod
    def args_of(message: NewMessage | None) -> tuple[Any, ...]:
        """The message's query arguments: id, role, source, parts, run_id (all null: none)."""
        if message is None:
            return (None,) * 5
        return (message.id, message.role, message.source, message.parts, message.run_id)


@dataclasses.dataclass(frozen=True)
class CheckpointWrite:
    """LangGraph's write of one checkpoint, as put_checkpoint's arguments (db.checkpointer)."""

    thread_id: str
    namespace: str
    checkpoint_id: str
    parent_id: str | None
    checkpoint: dict[str, Any]  # channel values not in blobs inline, as the library stores it
    metadata: dict[str, Any]
    blobs: list[tuple[str, str, str, bytes | None]]  # channel, version, type, serialized value

    @staticmethod
    def args_of(write: CheckpointWrite | None) -> tuple[Any, ...]:
        """thread, namespace, id, parent id, checkpoint, metadata, blob columns (null: none)."""
        if write is None:
            return (None,) * 10
        columns = [list(column) for column in zip(*write.blobs, strict=True)] or [[], [], [], []]
        return (
            write.thread_id, write.namespace, write.checkpoint_id, write.parent_id,
            write.checkpoint, write.metadata, *columns,
        )  # fmt: skip


async def put_checkpoint(db: Executor, write: CheckpointWrite) -> None:
    await execute(db, "put_checkpoint", *CheckpointWrite.args_of(write))


async def acquire_chat_lease(
    db: Executor,
    *,
    chat_id: uuid.UUID,
    token: uuid.UUID,
    lease_s: float,
    message: NewMessage | None = None,
) -> bool:
    """Take the chat's lease; with `message`, write it too (only if the lease was taken)."""
    args = NewMessage.args_of(message)
    return await fetchval(db, "acquire_chat_lease", chat_id, token, lease_s, *args) is not None


async def renew_chat_lease(
    db: Executor, *, chat_id: uuid.UUID, token: uuid.UUID, lease_s: float
) -> bool:
    return await fetchval(db, "renew_chat_lease", chat_id, token, lease_s) is not None


async def release_chat_lease(
    db: Executor,
    *,
    chat_id: uuid.UUID,
    token: uuid.UUID,
    message: NewMessage | None = None,
    settles: Sequence[tuple[uuid.UUID, str, int]] = (),
    run_end: tuple[str, str | None] | None = None,
    checkpoint: CheckpointWrite | None = None,
    run_changes: dict[str, Any] | None = None,
) -> bool:
    """Free the chat if this token holds it; with `message`, write it, `settles` (workspace,
    request id, credits charged: as close_reservation's settle), the end of the message's
    watch run (`run_end`: status, error; as finish_run), what the run found (`run_changes`)
    and the turn's LangGraph `checkpoint` (as put_checkpoint) too, in any case."""
    with_message = (settles, run_end, checkpoint, run_changes)
    assert message is not None or not any(with_message), "written with a closing message"
    columns = [list(column) for column in zip(*settles, strict=True)] or [[], [], []]
    status, error = run_end if run_end is not None else (None, None)
    args = (
        *NewMessage.args_of(message), *columns, status, error,
        *CheckpointWrite.args_of(checkpoint), run_changes,
    )  # fmt: skip
    return await fetchval(db, "release_chat_lease", chat_id, token, *args) is not None


async def chat_busy_until(db: Executor, *, chat_id: uuid.UUID) -> dt.datetime | None:
    """When the current turn's lease ends, or None when the chat is free."""
    row = await fetchrow(db, "get_chat_lease", chat_id)
    if row is None or not row["busy"]:
        return None
    until: dt.datetime = row["responding_until"]
    return until


async def insert_chat_message(
    db: Executor,
    *,
    message_id: uuid.UUID,
    chat_id: uuid.UUID,
    workspace_id: uuid.UUID,
    role: str,
    source: str,
    parts: list[dict[str, Any]],
    run_id: uuid.UUID | None = None,
) -> ChatMessage | None:
    """The stored message; None when this run already wrote a message in this role."""
    row = await fetchrow(
        db, "insert_chat_message", message_id, chat_id, workspace_id, role, source, parts, run_id
    )
    return ChatMessage.from_row(row)


async def list_chat_messages(
    db: Executor, *, chat_id: uuid.UUID, workspace_id: uuid.UUID, after_seq: int, limit: int
) -> list[ChatMessage]:
    rows = await fetch(db, "list_chat_messages", chat_id, workspace_id, after_seq, limit)
    return [message for row in rows if (message := ChatMessage.from_row(row))]


@dataclasses.dataclass(frozen=True)
class Automation(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    created_by: uuid.UUID
    trigger: dict[str, Any]
    action: dict[str, Any]
    enabled: bool
    next_run_at: dt.datetime | None
    notify: dict[str, Any]
    created_at: dt.datetime
    updated_at: dt.datetime
    last_status: str | None = None
    last_scheduled_for: dt.datetime | None = None
    last_condition_met: bool | None = None
    last_value: Any = None

    @property
    def chat_id(self) -> uuid.UUID:
        return uuid.UUID(str(self.action["thread_id"]))


@dataclasses.dataclass(frozen=True)
class Run(Row):
    id: uuid.UUID
    automation_id: uuid.UUID
    scheduled_for: dt.datetime
    manual: bool
    status: str = "queued"
    attempts: int = 0
    error: str | None = None
    workspace_id: uuid.UUID | None = None
    created_at: dt.datetime | None = None
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    changes: dict[str, Any] | None = None  # what the run found (agent.changes.run_data)
    condition_met: bool | None = None
    value: Any = None


async def count_watches(db: Executor, *, workspace_id: uuid.UUID) -> int:
    return int(await fetchval(db, "count_watches", workspace_id))


async def delete_thread_automations(
    db: Executor, *, workspace_id: uuid.UUID, chat_id: uuid.UUID
) -> None:
    await execute(db, "delete_thread_automations", workspace_id, str(chat_id))


async def insert_automation(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    created_by: uuid.UUID,
    trigger: dict[str, Any],
    action: dict[str, Any],
    next_run_at: dt.datetime,
    notify: dict[str, Any],
) -> Automation:
    row = await fetchrow(
        db, "insert_automation", workspace_id, created_by, trigger, action, next_run_at, notify
    )
    automation = Automation.from_row(row)
    assert automation is not None
    return automation


async def find_thread_automation(
    db: Executor, *, workspace_id: uuid.UUID, chat_id: uuid.UUID
) -> Automation | None:
    return Automation.from_row(
        await fetchrow(db, "find_thread_automation", workspace_id, str(chat_id))
    )


async def get_automation(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID
) -> Automation | None:
    return Automation.from_row(await fetchrow(db, "get_automation", automation_id, workspace_id))


async def delete_automation(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID
) -> bool:
    return await fetchval(db, "delete_automation", automation_id, workspace_id) is not None


async def disable_automation(db: Executor, *, automation_id: uuid.UUID) -> None:
    await execute(db, "disable_automation", automation_id)


async def list_watches(db: Executor, *, workspace_id: uuid.UUID, limit: int) -> list[Automation]:
    rows = await fetch(db, "list_watches", workspace_id, limit)
    return [a for row in rows if (a := Automation.from_row(row))]


async def watches_for_threads(
    db: Executor, *, workspace_id: uuid.UUID, chat_ids: list[uuid.UUID]
) -> list[Automation]:
    rows = await fetch(db, "watches_for_threads", workspace_id, [str(c) for c in chat_ids])
    return [a for row in rows if (a := Automation.from_row(row))]


async def insert_run(
    db: Executor,
    *,
    automation_id: uuid.UUID,
    workspace_id: uuid.UUID,
    scheduled_for: dt.datetime,
    manual: bool,
) -> uuid.UUID | None:
    run_id = await fetchval(db, "insert_run", automation_id, workspace_id, scheduled_for, manual)
    return run_id if isinstance(run_id, uuid.UUID) else None


async def list_runs(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID, limit: int
) -> list[Run]:
    rows = await fetch(db, "list_runs", automation_id, workspace_id, limit)
    return [run for row in rows if (run := Run.from_row(row))]


async def get_run(
    db: Executor, *, run_id: uuid.UUID, automation_id: uuid.UUID, workspace_id: uuid.UUID
) -> Run | None:
    return Run.from_row(await fetchrow(db, "get_run", run_id, automation_id, workspace_id))


async def claim_due_automations(db: Executor, *, limit: int) -> list[asyncpg.Record]:
    return await fetch(db, "claim_due_automations", limit)


async def insert_runs_batch(
    db: Executor,
    *,
    automation_ids: list[uuid.UUID],
    workspace_ids: list[uuid.UUID],
    scheduled_for: list[dt.datetime],
) -> list[uuid.UUID]:
    rows = await fetch(db, "insert_runs_batch", automation_ids, workspace_ids, scheduled_for)
    return [row["id"] for row in rows]


async def advance_automations(
    db: Executor, *, automation_ids: list[uuid.UUID], next_run_at: list[dt.datetime]
) -> None:
    await execute(db, "advance_automations", automation_ids, next_run_at)


_R = TypeVar("_R", bound=Row)


@dataclasses.dataclass(frozen=True)
class ClaimedRun:
    """A run just claimed, with its watch, the watch's chat and its creator's role (or None),
    and whether its turn began (the chat's lease taken with the question stored)."""

    run: Run
    automation: Automation | None
    chat: Chat | None
    creator_role: str | None
    chat_leased: bool
    # With the lease: the thread's latest checkpoint row, as latest_checkpoint reads it (None:
    # the thread has none yet).
    checkpoint: dict[str, Any] | None


async def claim_run(
    db: Executor,
    *,
    run_id: uuid.UUID,
    lease_s: float,
    chat_token: uuid.UUID,
    chat_lease_s: float,
    question_id: uuid.UUID,
) -> ClaimedRun | None:
    """Claim the run and, when its watch may run, begin its turn (see the query)."""
    row = await fetchrow(db, "claim_run", run_id, lease_s, chat_token, chat_lease_s, question_id)
    run = Run.from_row(row)
    if row is None or run is None:
        return None
    return ClaimedRun(
        run=run,
        automation=_prefixed(Automation, row, "a_"),
        chat=_prefixed(Chat, row, "c_"),
        creator_role=row["creator_role"],
        chat_leased=row["chat_leased"],
        checkpoint=_unprefixed(row, "cp_", "checkpoint_id"),
    )


def _prefixed(cls: type[_R], row: asyncpg.Record, prefix: str) -> _R | None:
    """The `prefix`-named columns of a joined row as a `cls`; None when the join found none."""
    found = _unprefixed(row, prefix, "id")
    return None if found is None else cls(**found)


def _unprefixed(row: asyncpg.Record, prefix: str, key: str) -> dict[str, Any] | None:
    """The `prefix`-named columns of a joined row, unprefixed; None when `key`'s is null."""
    if row[prefix + key] is None:
        return None
    return {name.removeprefix(prefix): val for name, val in row.items() if name.startswith(prefix)}


async def finish_run(db: Executor, *, run_id: uuid.UUID, status: str, error: str | None) -> None:
    await execute(db, "finish_run", run_id, status, error)


async def run_is_running(db: Executor, *, run_id: uuid.UUID) -> bool:
    return bool(await fetchval(db, "run_is_running", run_id))


async def requeue_run(db: Executor, *, run_id: uuid.UUID) -> None:
    await execute(db, "requeue_run", run_id)


async def list_stuck_runs(db: Executor) -> list[asyncpg.Record]:
    return await fetch(db, "list_stuck_runs")


async def fail_stuck_run(db: Executor, *, run_id: uuid.UUID, error: str) -> bool:
    status = await execute(db, "fail_stuck_run", run_id, error)
    return _count(status) == 1


async def renew_run_lease(db: Executor, *, run_id: uuid.UUID, lease_s: float) -> None:
    await execute(db, "renew_run_lease", run_id, lease_s)


async def expire_queued_run(db: Executor, *, run_id: uuid.UUID) -> None:
    await execute(db, "expire_queued_run", run_id)


async def get_key_acting_user(db: Executor, *, key_id: uuid.UUID) -> uuid.UUID | None:
    user_id = await fetchval(db, "get_key_acting_user", key_id)
    return user_id if isinstance(user_id, uuid.UUID) else None


@dataclasses.dataclass(frozen=True)
class NotificationTarget(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    name: str
    kind: str
    display: str
    url_encrypted: bytes = dataclasses.field(repr=False)
    signing_encrypted: bytes | None = dataclasses.field(repr=False)
    is_default: bool
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class Delivery(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    automation_id: uuid.UUID
    run_id: uuid.UUID
    target_id: uuid.UUID | None
    target_name: str
    status: str
    attempts: int
    last_error: str | None
    note: str | None
    created_at: dt.datetime
    finished_at: dt.datetime | None
    payload: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


async def count_notification_targets(db: Executor, *, workspace_id: uuid.UUID) -> int:
    return int(await fetchval(db, "count_notification_targets", workspace_id))


async def clear_default_notification_target(db: Executor, *, workspace_id: uuid.UUID) -> None:
    await execute(db, "clear_default_notification_target", workspace_id)


async def insert_notification_target(
    db: Executor,
    *,
    target_id: uuid.UUID,
    workspace_id: uuid.UUID,
    name: str,
    kind: str,
    display: str,
    url_encrypted: bytes,
    signing_encrypted: bytes | None,
    is_default: bool,
    created_by: uuid.UUID | None,
) -> NotificationTarget:
    row = await fetchrow(
        db, "insert_notification_target", target_id, workspace_id, name, kind, display,
        url_encrypted, signing_encrypted, is_default, created_by,
    )  # fmt: skip
    target = NotificationTarget.from_row(row)
    assert target is not None
    return target


async def list_notification_targets(
    db: Executor, *, workspace_id: uuid.UUID
) -> list[NotificationTarget]:
    rows = await fetch(db, "list_notification_targets", workspace_id)
    return [target for row in rows if (target := NotificationTarget.from_row(row))]


async def get_notification_target(
    db: Executor, *, target_id: uuid.UUID, workspace_id: uuid.UUID
) -> NotificationTarget | None:
    row = await fetchrow(db, "get_notification_target", target_id, workspace_id)
    return NotificationTarget.from_row(row)


async def delete_notification_target(
    db: Executor, *, target_id: uuid.UUID, workspace_id: uuid.UUID
) -> bool:
    return await fetchval(db, "delete_notification_target", target_id, workspace_id) is not None


async def notification_targets_for_watch(
    db: Executor, *, workspace_id: uuid.UUID, target_ids: list[uuid.UUID] | None
) -> list[NotificationTarget]:
    """The listed targets of the workspace, or its default target when `target_ids` is None."""
    rows = await fetch(db, "notification_targets_for_watch", workspace_id, target_ids)
    return [target for row in rows if (target := NotificationTarget.from_row(row))]


async def update_automation_notify(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID, notify: dict[str, Any]
) -> Automation | None:
    row = await fetchrow(db, "update_automation_notify", automation_id, workspace_id, notify)
    return Automation.from_row(row)


async def insert_delivery(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    automation_id: uuid.UUID,
    run_id: uuid.UUID,
    target_id: uuid.UUID,
    target_name: str,
    payload: dict[str, Any],
) -> uuid.UUID | None:
    """The new delivery's id; None when this run already has one for this target."""
    delivery_id = await fetchval(
        db, "insert_delivery", workspace_id, automation_id, run_id, target_id, target_name, payload
    )
    return delivery_id if isinstance(delivery_id, uuid.UUID) else None


async def insert_delivery_note(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    automation_id: uuid.UUID,
    run_id: uuid.UUID,
    status: str,
    note: str,
) -> None:
    await execute(db, "insert_delivery_note", workspace_id, automation_id, run_id, status, note)


async def claim_delivery(
    db: Executor, *, delivery_id: uuid.UUID, lease_s: float
) -> Delivery | None:
    return Delivery.from_row(await fetchrow(db, "claim_delivery", delivery_id, lease_s))


async def finish_delivery(
    db: Executor, *, delivery_id: uuid.UUID, status: str, error: str | None
) -> None:
    await execute(db, "finish_delivery", delivery_id, status, error)


async def retry_delivery(
    db: Executor, *, delivery_id: uuid.UUID, error: str, delay_s: float
) -> None:
    await execute(db, "retry_delivery", delivery_id, error, delay_s)


async def list_lost_deliveries(db: Executor) -> list[uuid.UUID]:
    return [row["id"] for row in await fetch(db, "list_lost_deliveries")]


async def list_run_deliveries(
    db: Executor, *, run_ids: list[uuid.UUID], workspace_id: uuid.UUID
) -> list[Delivery]:
    rows = await fetch(db, "list_run_deliveries", run_ids, workspace_id)
    return [delivery for row in rows if (delivery := Delivery.from_row(row))]


async def list_watch_versions(
    db: Executor, *, automation_id: uuid.UUID, url: str, limit: int
) -> list[str]:
    rows = await fetch(db, "list_watch_versions", automation_id, url, limit)
    return [str(row["digest"]) for row in rows]


async def insert_watch_version(
    db: Executor, *, automation_id: uuid.UUID, url: str, digest: str
) -> None:
    await execute(db, "insert_watch_version", automation_id, url, digest)


async def prune_watch_versions(
    db: Executor, *, automation_id: uuid.UUID, url: str, keep: int
) -> None:
    await execute(db, "prune_watch_versions", automation_id, url, keep)


@dataclasses.dataclass(frozen=True)
class StuckRun(Row):
    id: uuid.UUID
    automation_id: uuid.UUID
    workspace_id: uuid.UUID
    attempts: int
    started_at: dt.datetime | None
    lease_until: dt.datetime
    past_lease_s: float


@dataclasses.dataclass(frozen=True)
class WatchesDue(Row):
    due: int
    overdue: int
    oldest_due_s: float | None


async def status_watches(db: Executor, *, overdue_s: float) -> WatchesDue:
    found = WatchesDue.from_row(await fetchrow(db, "status_watches", overdue_s))
    assert found is not None  # an aggregate always answers one row
    return found


async def status_runs_last_hour(db: Executor) -> dict[str, int]:
    return {row["status"]: row["count"] for row in await fetch(db, "status_runs_last_hour")}


async def status_stuck_runs(db: Executor, *, limit: int) -> list[StuckRun]:
    rows = await fetch(db, "status_stuck_runs", limit)
    return [run for row in rows if (run := StuckRun.from_row(row))]


async def status_jobs(db: Executor) -> dict[str, int]:
    return {row["status"]: row["count"] for row in await fetch(db, "status_jobs")}


async def release_job(db: Executor, *, job_id: uuid.UUID) -> bool:
    return await fetchval(db, "release_job", job_id) is not None


async def hand_job_to_chat(db: Executor, *, job_id: uuid.UUID) -> bool:
    return await fetchval(db, "hand_job_to_chat", job_id) is not None


async def set_job_chat(db: Executor, *, job_id: uuid.UUID, chat_id: uuid.UUID) -> None:
    await execute(db, "set_job_chat", job_id, chat_id)


async def claim_job_post(db: Executor, *, job_id: uuid.UUID) -> Job | None:
    return Job.from_row(await fetchrow(db, "claim_job_post", job_id))


# Sessions ended together, and invites (LOOKOUT_SIGNUP=invite).


async def delete_user_sessions(db: Executor, *, user_id: uuid.UUID) -> int:
    return int(await fetchval(db, "delete_user_sessions", user_id))


@dataclasses.dataclass(frozen=True)
class Invite(Row):
    id: uuid.UUID
    workspace_id: uuid.UUID
    email: str
    role: str
    created_by: uuid.UUID | None
    created_at: dt.datetime
    expires_at: dt.datetime
    accepted_at: dt.datetime | None


async def insert_invite(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    email: str,
    role: str,
    token_hash: bytes,
    created_by: uuid.UUID | None,
    expires_at: dt.datetime,
) -> Invite:
    row = await fetchrow(
        db, "insert_invite", workspace_id, email, role, token_hash, created_by, expires_at
    )
    invite = Invite.from_row(row)
    assert invite is not None
    return invite


async def list_open_invites(db: Executor, *, workspace_id: uuid.UUID) -> list[Invite]:
    rows = await fetch(db, "list_open_invites", workspace_id)
    return [invite for row in rows if (invite := Invite.from_row(row))]


async def count_open_invites(db: Executor, *, workspace_id: uuid.UUID) -> int:
    return int(await fetchval(db, "count_open_invites", workspace_id))


async def delete_invite(db: Executor, *, invite_id: uuid.UUID, workspace_id: uuid.UUID) -> bool:
    return await fetchval(db, "delete_invite", invite_id, workspace_id) is not None


@dataclasses.dataclass(frozen=True)
class AcceptedInvite(Row):
    workspace_id: uuid.UUID
    role: str


async def accept_invite(
    db: Executor, *, token_hash: bytes, email: str, user_id: uuid.UUID
) -> AcceptedInvite | None:
    row = await fetchrow(db, "accept_invite", token_hash, email, user_id)
    return AcceptedInvite.from_row(row)


# --- watch conditions, pause / resume / edit (migration 0007) --------------------------------


async def find_thread_watch(
    db: Executor, *, workspace_id: uuid.UUID, chat_id: uuid.UUID
) -> Automation | None:
    """The chat's watch, running or paused, with its last run."""
    return Automation.from_row(await fetchrow(db, "find_thread_watch", workspace_id, str(chat_id)))


async def set_automation_enabled(
    db: Executor,
    *,
    automation_id: uuid.UUID,
    workspace_id: uuid.UUID,
    enabled: bool,
    next_run_at: dt.datetime | None,
) -> Automation | None:
    row = await fetchrow(
        db, "set_automation_enabled", automation_id, workspace_id, enabled, next_run_at
    )
    return Automation.from_row(row)


async def update_automation_watch(
    db: Executor,
    *,
    automation_id: uuid.UUID,
    workspace_id: uuid.UUID,
    trigger: dict[str, Any],
    action: dict[str, Any],
    next_run_at: dt.datetime,
    notify: dict[str, Any],
) -> Automation | None:
    row = await fetchrow(
        db, "update_automation_watch", automation_id, workspace_id, trigger, action, next_run_at,
        notify,
    )  # fmt: skip
    return Automation.from_row(row)


async def set_run_condition(
    db: Executor, *, run_id: uuid.UUID, condition_met: bool | None, value: Any,
    became_met: bool = False,
) -> None:  # fmt: skip
    await execute(db, "set_run_condition", run_id, condition_met, value, became_met)


async def watches_for_threads_any(
    db: Executor, *, workspace_id: uuid.UUID, chat_ids: list[uuid.UUID]
) -> list[Automation]:
    """The watch of each listed chat, paused ones included, with its last run."""
    rows = await fetch(db, "watches_for_threads_any", workspace_id, [str(c) for c in chat_ids])
    return [a for row in rows if (a := Automation.from_row(row))]


@dataclasses.dataclass(frozen=True)
class SavedArtifact(Row):
    id: uuid.UUID
    expires_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class Artifact(Row):
    content_type: str
    body: bytes = dataclasses.field(repr=False)


async def insert_job_artifact(
    db: Executor, *, job_id: uuid.UUID, content_type: str, body: bytes
) -> SavedArtifact | None:
    """None when the job is gone."""
    return SavedArtifact.from_row(
        await fetchrow(db, "insert_job_artifact", job_id, content_type, body)
    )


async def get_job_artifact(
    db: Executor, *, artifact_id: uuid.UUID, job_id: uuid.UUID, workspace_id: uuid.UUID
) -> Artifact | None:
    return Artifact.from_row(
        await fetchrow(db, "get_job_artifact", artifact_id, job_id, workspace_id)
    )
