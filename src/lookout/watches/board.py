"""The watches page: every watch of a workspace with its status, last check and last change,
and the controls of a row applied to many watches at once."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access.principals import Principal
from lookout.agent import urls
from lookout.db import history as history_db
from lookout.db import repo
from lookout.settings import Settings
from lookout.watches import controls, service

MAX_LISTED = 500
MAX_BULK = 100
ACTIONS = ("run", "pause", "resume", "stop")
OUT_OF_CREDITS = "Out of credits"  # how runner.py records a run that ran out


def status(row: history_db.WatchRow) -> str:
    """ok, paused, failing or out_of_credits (a watch paused for credits says why)."""
    if (row.last_error or "").startswith(OUT_OF_CREDITS):
        return "out_of_credits"
    if not row.enabled:
        return "paused"
    if row.last_status == "failed":
        return "failing"
    return "ok"


def view(row: history_db.WatchRow) -> dict[str, Any]:
    shown = service.summary(row)
    message = str(shown["message"] or "")
    found = urls.spans(message)
    return {
        "id": shown["id"], "chat_id": shown["chat_id"], "chat_title": row.chat_title,
        "message": message, "url": row.page_url or (found[0][2] if found else None),
        "page_title": row.page_title or None, "cadence": shown["cadence"],
        "timezone": shown["timezone"], "schedule": shown["schedule"],
        "condition": shown["condition"], "condition_words": shown["condition_words"],
        "enabled": row.enabled, "status": status(row), "last_error": row.last_error,
        "last_checked_at": _iso(row.last_checked_at), "last_changed_at": _iso(row.last_changed_at),
        "next_run_at": shown["next_run_at"] if row.enabled else None, "tags": tags_of(row),
    }  # fmt: skip


def tags_of(automation: repo.Automation) -> list[str]:
    """The watch's tags (kept in its settings by an import, a changedetection.io one's too)."""
    found = automation.notify.get("tags")
    return [str(tag) for tag in found if isinstance(tag, str)] if isinstance(found, list) else []


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


async def listing(
    db: asyncpg.Pool, principal: Principal, tag: str | None = None
) -> list[dict[str, Any]]:
    """The workspace's watches; with `tag`, only those tagged so (case and spaces aside)."""
    rows = await history_db.list_watch_rows(
        db, workspace_id=principal.workspace_id, limit=MAX_LISTED
    )
    shown = [view(row) for row in rows]
    if tag is None:
        return shown
    wanted = _folded(tag)
    return [row for row in shown if wanted in {_folded(t) for t in row["tags"]}]


def _folded(tag: str) -> str:
    return " ".join(tag.split()).casefold()


async def apply(
    db: asyncpg.Pool, settings: Settings, principal: Principal, action: str,
    ids: list[uuid.UUID],
) -> list[dict[str, Any]]:  # fmt: skip
    """Run, pause, resume or stop each watch; one outcome per id ({id, ok, error, run_id}: the
    check a run queued, null otherwise). Every id must name a watch of the workspace (not_found
    otherwise, before anything is done)."""
    principal.require("editor")
    wanted = list(dict.fromkeys(ids))
    await _all_found(db, principal, wanted)
    out = []
    for automation_id in wanted:
        try:
            run_id = await _one(db, settings, principal, action, automation_id)
        except errors.LookoutError as exc:
            out.append(
                {"id": str(automation_id), "ok": False, "error": exc.to_dict(), "run_id": None}
            )
        else:
            queued = str(run_id) if run_id else None
            out.append({"id": str(automation_id), "ok": True, "error": None, "run_id": queued})
    return out


async def _one(
    db: asyncpg.Pool, settings: Settings, principal: Principal, action: str,
    automation_id: uuid.UUID,
) -> uuid.UUID | None:  # fmt: skip
    """Do `action` to one watch; the run it queued (run), None otherwise."""
    if action == "run":
        automation = await service.get(db, principal, automation_id)
        if not automation.enabled:
            raise errors.Conflict("This watch is paused: resume it to run it.")
        return await service.run_now(db, principal, automation_id)
    if action == "stop":
        await service.stop(db, principal, automation_id)
    else:
        await controls.set_enabled(db, settings, principal, automation_id, action == "resume")
    return None


async def _all_found(db: asyncpg.Pool, principal: Principal, ids: list[uuid.UUID]) -> None:
    missing = []
    for automation_id in ids:
        try:
            await service.get(db, principal, automation_id)
        except errors.NotFound:
            missing.append(str(automation_id))
    if missing:
        raise errors.NotFound(
            f"No such watch in this workspace: {', '.join(missing[:5])}.", ids=missing
        )
