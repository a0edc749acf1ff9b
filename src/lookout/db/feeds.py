"""Typed repo functions for feeds (migration 0012) and for making a target the default."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

from lookout.db import repo
from lookout.db.repo import Executor, Row


@dataclasses.dataclass(frozen=True)
class FeedToken(Row):
    """A feed's secret URL, as stored: never the token, only its prefix."""

    id: uuid.UUID
    workspace_id: uuid.UUID
    automation_id: uuid.UUID | None
    prefix: str
    created_at: dt.datetime
    rotated_at: dt.datetime
    last_used_at: dt.datetime | None


@dataclasses.dataclass(frozen=True)
class ChangedRun(Row):
    id: uuid.UUID
    automation_id: uuid.UUID
    finished_at: dt.datetime
    changes: dict[str, Any]
    action: dict[str, Any]
    workspace_name: str
    became_met: bool = False  # the run where the watch's condition became true
    value: Any = None  # what that run read


async def set_target_default(
    db: Executor, *, target_id: uuid.UUID, workspace_id: uuid.UUID, is_default: bool
) -> repo.NotificationTarget | None:
    row = await repo.fetchrow(
        db, "set_notification_target_default", target_id, workspace_id, is_default
    )
    return repo.NotificationTarget.from_row(row)


async def upsert_feed_token(
    db: Executor,
    *,
    workspace_id: uuid.UUID,
    automation_id: uuid.UUID | None,
    token_hash: bytes,
    prefix: str,
    created_by: uuid.UUID | None,
) -> FeedToken:
    name = "upsert_feed_token" if automation_id is None else "upsert_watch_feed_token"
    row = await repo.fetchrow(db, name, workspace_id, automation_id, token_hash, prefix, created_by)
    found = FeedToken.from_row(row)
    assert found is not None
    return found


async def list_feed_tokens(db: Executor, *, workspace_id: uuid.UUID) -> list[FeedToken]:
    rows = await repo.fetch(db, "list_feed_tokens", workspace_id)
    return [found for row in rows if (found := FeedToken.from_row(row))]


async def delete_feed_token(db: Executor, *, feed_id: uuid.UUID, workspace_id: uuid.UUID) -> bool:
    return await repo.fetchval(db, "delete_feed_token", feed_id, workspace_id) is not None


async def use_feed_token(db: Executor, *, token_hash: bytes) -> FeedToken | None:
    return FeedToken.from_row(await repo.fetchrow(db, "use_feed_token", token_hash))


async def list_changed_runs(
    db: Executor, *, workspace_id: uuid.UUID, automation_id: uuid.UUID | None, limit: int
) -> list[ChangedRun]:
    rows = await repo.fetch(db, "list_changed_runs", workspace_id, automation_id, limit)
    return [found for row in rows if (found := ChangedRun.from_row(row))]


async def get_workspace_name(db: Executor, *, workspace_id: uuid.UUID) -> str | None:
    name = await repo.fetchval(db, "get_workspace_name", workspace_id)
    return str(name) if name is not None else None


@dataclasses.dataclass(frozen=True)
class ExportedWatch(Row):
    id: uuid.UUID
    trigger: dict[str, Any]
    action: dict[str, Any]
    enabled: bool
    notify: dict[str, Any]
    title: str


async def export_watches(
    db: Executor, *, workspace_id: uuid.UUID, limit: int
) -> list[ExportedWatch]:
    rows = await repo.fetch(db, "export_watches", workspace_id, limit)
    return [found for row in rows if (found := ExportedWatch.from_row(row))]
