"""Typed repo functions for a watch's history (migration 0011): the watches page's rows, checks,
the page content each check read, retention and the workspace's time zone."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

from lookout.db import repo
from lookout.db.repo import Executor, Row


@dataclasses.dataclass(frozen=True)
class WatchRow(repo.Automation):
    """A watch with what the watches page shows of it."""

    last_error: str | None = None
    last_checked_at: dt.datetime | None = None
    last_changed_at: dt.datetime | None = None
    page_url: str | None = None
    page_title: str | None = None
    chat_title: str = ""


@dataclasses.dataclass(frozen=True)
class Check(Row):
    id: uuid.UUID
    scheduled_for: dt.datetime
    manual: bool
    status: str
    error: str | None
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    condition_met: bool | None
    value: Any
    credits: int | None
    compared: bool
    changed: bool
    pages: int


@dataclasses.dataclass(frozen=True)
class CheckPage(Row):
    url: str
    title: str
    digest: str
    body: bytes = dataclasses.field(repr=False)
    size: int
    base_body: bytes | None = dataclasses.field(default=None, repr=False)
    kind: str = "page"  # or "items": a search's results (migration 0016)


@dataclasses.dataclass(frozen=True)
class StoredPage:
    """A page a check read, ready to store: its compressed content, digest and the digest of
    the content it is compressed against (None: on its own)."""

    url: str
    title: str
    digest: str
    body: bytes
    size: int
    base: str | None = None
    kind: str = "page"


@dataclasses.dataclass(frozen=True)
class Content(Row):
    digest: str
    body: bytes = dataclasses.field(repr=False)


@dataclasses.dataclass(frozen=True)
class Prefs(Row):
    timezone: str
    history_retention_days: int


@dataclasses.dataclass(frozen=True)
class Pruned(Row):
    history_pruned_before: dt.datetime | None
    history_retention_days: int


async def list_watch_rows(db: Executor, *, workspace_id: uuid.UUID, limit: int) -> list[WatchRow]:
    rows = await repo.fetch(db, "list_watch_rows", workspace_id, limit)
    return [w for row in rows if (w := WatchRow.from_row(row)) is not None]


async def list_checks(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID, before: dt.datetime,
    limit: int,
) -> list[Check]:  # fmt: skip
    rows = await repo.fetch(db, "list_checks", automation_id, workspace_id, before, limit)
    return [c for row in rows if (c := Check.from_row(row)) is not None]


async def get_check(
    db: Executor, *, run_id: uuid.UUID, automation_id: uuid.UUID, workspace_id: uuid.UUID
) -> Check | None:
    return Check.from_row(await repo.fetchrow(db, "get_check", run_id, automation_id, workspace_id))


async def previous_read_check(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID, before: dt.datetime
) -> uuid.UUID | None:
    found = await repo.fetchval(db, "previous_read_check", automation_id, workspace_id, before)
    return found if isinstance(found, uuid.UUID) else None


async def get_check_pages(
    db: Executor, *, run_id: uuid.UUID, workspace_id: uuid.UUID
) -> list[CheckPage]:
    rows = await repo.fetch(db, "get_check_pages", run_id, workspace_id)
    return [p for row in rows if (p := CheckPage.from_row(row)) is not None]


async def content_exists(db: Executor, *, automation_id: uuid.UUID, digest: str) -> bool:
    return bool(await repo.fetchval(db, "content_exists", automation_id, digest))


async def latest_base_content(
    db: Executor, *, automation_id: uuid.UUID, url: str
) -> Content | None:
    """The page's latest content compressed on its own, touched (call it in the transaction
    that stores a content compressed against it)."""
    return Content.from_row(await repo.fetchrow(db, "latest_base_content", automation_id, url))


async def store_page(
    db: Executor, *, run_id: uuid.UUID, automation_id: uuid.UUID, workspace_id: uuid.UUID,
    page: StoredPage,
) -> None:  # fmt: skip
    """Store a page a check read: its content once per watch, and the check's pointer to it."""
    await repo.execute(
        db, "upsert_page_content", automation_id, workspace_id, page.digest, page.body,
        page.size, page.base,
    )  # fmt: skip
    await repo.execute(
        db, "insert_run_page", run_id, automation_id, workspace_id, page.url, page.title,
        page.digest, page.kind,
    )  # fmt: skip


async def set_run_credits(db: Executor, *, run_id: uuid.UUID, credits: int) -> None:
    await repo.execute(db, "set_run_credits", run_id, credits)


async def store_seen_page(
    db: Executor, *, run_id: uuid.UUID, automation_id: uuid.UUID, workspace_id: uuid.UUID,
    url: str, title: str, digest: str, kind: str, credits: int,
) -> bool:  # fmt: skip
    """A one-page check whose content the watch stores already, with its credits, in one
    statement; False (nothing written) when the content is not stored."""
    stored = await repo.fetchval(
        db, "store_seen_page", run_id, automation_id, workspace_id, url, title, digest, kind,
        credits,
    )  # fmt: skip
    return bool(stored)


async def get_history_pruned(
    db: Executor, *, automation_id: uuid.UUID, workspace_id: uuid.UUID
) -> Pruned | None:
    return Pruned.from_row(
        await repo.fetchrow(db, "get_history_pruned", automation_id, workspace_id)
    )


async def prune_history(db: Executor, *, batch: int) -> tuple[int, int]:
    """(checks deleted, watches marked) for one batch of checks past their retention."""
    row = await repo.fetchrow(db, "prune_history", batch)
    assert row is not None
    return int(row["runs"]), int(row["watches"])


async def prune_page_contents(db: Executor) -> int:
    done = await repo.execute(db, "prune_page_contents")
    return int(done.split()[-1])


async def get_workspace_prefs(db: Executor, *, workspace_id: uuid.UUID) -> Prefs | None:
    return Prefs.from_row(await repo.fetchrow(db, "get_workspace_prefs", workspace_id))


async def update_workspace_prefs(
    db: Executor, *, workspace_id: uuid.UUID, timezone: str | None, retention_days: int | None
) -> Prefs | None:
    row = await repo.fetchrow(db, "update_workspace_prefs", workspace_id, timezone, retention_days)
    return Prefs.from_row(row)


async def history_storage(db: Executor, *, automation_id: uuid.UUID) -> int:
    """Bytes a watch's stored pages take (compressed contents and their rows)."""
    return int(await repo.fetchval(db, "history_storage", automation_id) or 0)


async def manual_runs(
    db: Executor, *, workspace_id: uuid.UUID, run_ids: list[uuid.UUID]
) -> frozenset[uuid.UUID]:
    rows = await repo.fetch(db, "manual_runs", workspace_id, run_ids)
    return frozenset(row["id"] for row in rows)
