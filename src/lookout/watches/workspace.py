"""A workspace's own settings for its watches: the default time zone new watches run in and how
long their history of checks is kept."""

from __future__ import annotations

import functools
import uuid
import zoneinfo
from typing import Any

import asyncpg

from lookout import errors
from lookout.access.principals import Principal
from lookout.agent import router
from lookout.db import history as history_db
from lookout.watches import schedule

DEFAULT_RETENTION_DAYS = 90
MAX_ZONE = 64


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def checked_zone(name: str) -> str:
    """`name` when it is an IANA time zone (invalid_input otherwise: the zone database's
    other files, "posixrules" or a directory such as "Europe", are not zones)."""
    if not name or len(name) > MAX_ZONE or name not in _known():
        raise errors.InvalidInput(
            f"{name[:MAX_ZONE]!r} is not a time zone; use an IANA name such as Europe/Paris.",
            fields={"timezone": ["unknown timezone"]},
        )
    schedule.zone(name)
    return name


def prefs_view(prefs: history_db.Prefs) -> dict[str, Any]:
    return {"timezone": prefs.timezone, "history_retention_days": prefs.history_retention_days}


async def get(db: asyncpg.Pool, principal: Principal) -> dict[str, Any]:
    found = await history_db.get_workspace_prefs(db, workspace_id=principal.workspace_id)
    if found is None:
        raise errors.NotFound("No such workspace.")
    return prefs_view(found)


async def update(db: asyncpg.Pool, principal: Principal, changes: dict[str, Any]) -> dict[str, Any]:
    """Change the default time zone and/or the retention (editors and owners)."""
    principal.require("editor")
    zone = changes.get("timezone")
    updated = await history_db.update_workspace_prefs(
        db, workspace_id=principal.workspace_id,
        timezone=checked_zone(zone) if zone is not None else None,
        retention_days=changes.get("history_retention_days"),
    )  # fmt: skip
    if updated is None:
        raise errors.NotFound("No such workspace.")
    return prefs_view(updated)


async def zone_for_new_watch(
    db: asyncpg.Pool, workspace_id: uuid.UUID, question: str, stated: str, browser: str | None
) -> str:
    """The zone a new watch runs in: the one its message names, else the viewer's browser's,
    else the workspace's default."""
    if stated != "UTC" or router.names_zone(question):
        return stated
    if browser:
        return browser
    found = await history_db.get_workspace_prefs(db, workspace_id=workspace_id)
    return found.timezone if found is not None else "UTC"
