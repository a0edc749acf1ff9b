"""Moving watches in and out of a workspace: export them as a file, import that file, or import
a changedetection.io backup's url-watches.json in one step. An import is checked whole before
anything is created (every cadence, the workspace's watch budget)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import asyncpg
import marshmallow

from lookout import errors
from lookout.access.principals import Principal
from lookout.chat import chats
from lookout.db import feeds as feeds_db
from lookout.db import repo
from lookout.notify import prefs
from lookout.schema import portability as schema
from lookout.settings import Settings
from lookout.watches import imports, schedule, service


async def export(db: asyncpg.Pool, principal: Principal) -> dict[str, Any]:
    """The workspace's watches as an ExportSchema document."""
    found = await feeds_db.export_watches(
        db, workspace_id=principal.workspace_id, limit=schema.MAX_WATCHES
    )
    return {
        "format": schema.EXPORT_FORMAT,
        "version": 1,
        "exported_at": dt.datetime.now(dt.UTC).isoformat(),
        "watches": [_exported(watch) for watch in found],
    }


def _exported(watch: feeds_db.ExportedWatch) -> dict[str, Any]:
    tags, condition = watch.notify.get("tags"), watch.action.get("condition")
    if isinstance(condition, dict):  # only what the file's schema (and an import) takes
        condition = {key: condition.get(key) for key in ("kind", "value", "text", "unit")}
    return {
        "title": watch.title[: schema.MAX_TITLE],
        "message": str(watch.action.get("message", "")),
        "cadence": str(watch.trigger["cron"]),
        "timezone": str(watch.trigger.get("timezone", "UTC")),
        "enabled": watch.enabled,
        "tags": list(tags) if isinstance(tags, list) else [],
        "condition": condition or None,
        "notify": prefs.WatchNotify.of(watch.notify).enabled,
    }


def plan(source: str, document: dict[str, Any], settings: Settings) -> list[imports.Planned]:
    """What the file asks for; InvalidInput saying what is wrong with it."""
    if source == "changedetection.io":
        return imports.from_cdio(document, min_minutes=settings.min_watch_minutes)
    if "watching" in document:
        raise errors.InvalidInput(
            "This looks like a changedetection.io file: choose that source to import it.",
            fields={"source": ["a changedetection.io file"]},
        )
    loaded = _load(schema.ExportSchema(), document)
    return imports.from_lookout(loaded["watches"])


def _load(loader: schema.ExportSchema, document: dict[str, Any]) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = loader.load(document)
    except marshmallow.ValidationError as exc:
        raise errors.InvalidInput(
            "This is not a Lookout watches export (a file from Settings → Export).",
            fields={"file": exc.messages},
        ) from None
    return loaded


async def run_import(
    db: asyncpg.Pool, settings: Settings, principal: Principal, planned: list[imports.Planned]
) -> list[dict[str, Any]]:
    """Create every planned watch, each in a new chat titled like it; returns what was made."""
    principal.require("editor")
    now = dt.datetime.now(dt.UTC)
    for item in planned:
        schedule.validate(item.cadence, item.timezone, min_minutes=settings.min_watch_minutes,
                          now=now)  # fmt: skip
    have = await repo.count_watches(db, workspace_id=principal.workspace_id)
    wanted = sum(item.enabled for item in planned)
    if have + wanted > settings.max_watches:
        raise errors.Conflict(
            f"This file has {wanted} active watches and the workspace has {have} of at most "
            f"{settings.max_watches}; stop some first, or import fewer."
        )
    return [await _create(db, settings, principal, item) for item in planned]


async def _create(
    db: asyncpg.Pool, settings: Settings, principal: Principal, item: imports.Planned
) -> dict[str, Any]:
    chat = await chats.create(db, principal, item.title)
    automation = await service.create(
        db, settings, principal, chat=chat, message=item.message, cadence=item.cadence,
        timezone=item.timezone, notify=prefs.WatchNotify(enabled=item.notify),
        condition=item.condition,
    )  # fmt: skip
    if item.tags:
        await repo.update_automation_notify(
            db, automation_id=automation.id, workspace_id=principal.workspace_id,
            notify={**automation.notify, "tags": list(item.tags)},
        )  # fmt: skip
    if not item.enabled:
        await repo.set_automation_enabled(
            db, automation_id=automation.id, workspace_id=principal.workspace_id,
            enabled=False, next_run_at=None,
        )  # fmt: skip
    return {"watch_id": automation.id, "chat_id": chat.id, "title": item.title,
            "cadence": item.cadence, "tags": list(item.tags)}  # fmt: skip
