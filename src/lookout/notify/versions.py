"""Flap suppression: the last versions of each watched page, by digest, and the rule "report a
change only when the new version differs from each of the last N versions".

A page alternating between A and B changes every run; with N = 2 only its first change is
reported. Versions are recorded on changes only (as the `data-change` parts carry them): the
version before the first reported change, then each new one.
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from lookout.db import repo
from lookout.notify import prefs

KEEP = prefs.MAX_COMPARED


def is_new(after: str, recent: list[str], compared: int) -> bool:
    """True when `after` differs from each of the `compared` most recent versions (newest first)."""
    return after not in recent[: max(1, compared)]


async def reportable(
    db: asyncpg.Pool, automation_id: uuid.UUID, changes: list[dict[str, Any]], compared: int
) -> list[dict[str, Any]]:
    """The changes worth reporting; records every page's new version either way."""
    kept = []
    async with repo.transaction(db) as conn:
        for change in changes:
            if await _record(conn, automation_id, change, compared):
                kept.append(change)
    return kept


async def _record(
    conn: asyncpg.Connection, automation_id: uuid.UUID, change: dict[str, Any], compared: int
) -> bool:
    url, before, after = str(change["url"]), change.get("before"), change.get("after")
    if not isinstance(after, str):
        return True  # a change without digests (an older planner): report it
    recent = await repo.list_watch_versions(conn, automation_id=automation_id, url=url, limit=KEEP)
    if isinstance(before, str) and (not recent or recent[0] != before):
        # The version the page changed from (the baseline, or one seen by an interactive turn).
        await repo.insert_watch_version(conn, automation_id=automation_id, url=url, digest=before)
        recent.insert(0, before)
    new = is_new(after, recent, compared)
    await repo.insert_watch_version(conn, automation_id=automation_id, url=url, digest=after)
    await repo.prune_watch_versions(conn, automation_id=automation_id, url=url, keep=KEEP)
    return new
