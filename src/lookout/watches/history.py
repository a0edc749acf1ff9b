"""A watch's history: its checks, the page each check read and the diff between two checks.

The content of a page at a check is stored once per watch per distinct content (its sha-256),
compressed (watches.snapshots): a page that did not change costs a small row per check, one that
changed a little costs about its edit. A search's, a site's or a maps search's results are kept
the same way ("items": the results' {identity: line} as JSON, at most agent.results.MAX_ITEMS
lines of ITEM_CHARS), and compared item by item as the chat compares them (agent.results).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access.principals import Principal
from lookout.agent import changes, results
from lookout.db import history as history_db
from lookout.db import repo
from lookout.watches import service, snapshots

MAX_STORED = 256 * 1024  # compressed bytes of one page at one check (the column's bound)
MAX_CHECKS = 200
MAX_PAGES = 20  # pages of one check kept (a watch of many pages keeps the first ones)


async def record(
    db: asyncpg.Pool, automation: repo.Automation, run_id: uuid.UUID,
    pages: list[dict[str, Any]], credits: int,
) -> None:  # fmt: skip
    """Keep what a check read ({url, title, markdown} each, or a search's {url, title, kind:
    "items", items}) and what it cost.

    A one-page check whose content the watch stores already (a page that did not change, most
    checks) is one statement (store_seen_page) instead of a transaction of six round trips
    (BEGIN, content_exists, upsert_page_content, insert_run_page, set_run_credits, COMMIT): this
    function was 8 % of a scheduled turn's profiled time, most of it those round trips (cProfile
    of 200 turns in bench/_ablate.py's harness, 2026-12-04). Same harness, 4 passes of 200 turns
    each side: 13.9 -> 13.2 ms of CPU a turn (Postgres and Redis 4.2 -> 3.8), medians."""
    read = {str(page["url"])[:2048]: page for page in pages[:MAX_PAGES]}  # read twice: the last
    if len(read) == 1:
        ((url, page),) = read.items()
        kind, raw = raw_of(page)
        seen = await history_db.store_seen_page(
            db, run_id=run_id, automation_id=automation.id, workspace_id=automation.workspace_id,
            url=url, title=str(page.get("title") or "")[:300], digest=snapshots.digest(raw),
            kind=kind, credits=credits,
        )  # fmt: skip
        if seen:
            return
    async with repo.transaction(db) as conn:
        for url, page in read.items():
            kind, raw = raw_of(page)
            title = str(page.get("title") or "")
            found = await _stored(conn, automation.id, url, title, raw, kind)
            if found is not None:
                await history_db.store_page(
                    conn, run_id=run_id, automation_id=automation.id,
                    workspace_id=automation.workspace_id, page=found,
                )  # fmt: skip
        await history_db.set_run_credits(conn, run_id=run_id, credits=credits)


def raw_of(page: dict[str, Any]) -> tuple[str, bytes]:
    """(kind, the bytes kept): a page's markdown, or a search's results as JSON in their order."""
    if page.get("kind") == "items":
        items = {str(key): str(line) for key, line in dict(page["items"]).items()}
        return "items", json.dumps(items, ensure_ascii=False, separators=(",", ":")).encode()
    return "page", str(page["markdown"]).encode("utf-8")


async def _stored(
    conn: asyncpg.Connection, automation_id: uuid.UUID, url: str, title: str, raw: bytes,
    kind: str,
) -> history_db.StoredPage | None:  # fmt: skip
    """The page ready to store: compressed against its latest base when that is smaller (and
    not compressed again when this content is stored already); None when too big to keep."""
    digest = snapshots.digest(raw)
    body, base = b"", None
    if not await history_db.content_exists(conn, automation_id=automation_id, digest=digest):
        latest = await history_db.latest_base_content(conn, automation_id=automation_id, url=url)
        earlier = snapshots.decompress(latest.body) if latest is not None else None
        body, used = snapshots.compress(raw, earlier)
        base = latest.digest if used and latest is not None else None
        if len(body) > MAX_STORED:
            return None
    return history_db.StoredPage(url, title[:300], digest, body, len(raw), base, kind)


def content(page: history_db.CheckPage) -> str:
    base = snapshots.decompress(page.base_body) if page.base_body is not None else None
    return snapshots.decompress(page.body, base).decode("utf-8")


def check_view(check: history_db.Check) -> dict[str, Any]:
    return {
        "id": str(check.id), "checked_at": _iso(check.finished_at or check.scheduled_for),
        "scheduled_for": _iso(check.scheduled_for), "manual": check.manual,
        "status": check.status, "error": check.error, "changed": check.changed,
        "compared": check.compared, "condition_met": check.condition_met,
        "credits": check.credits, "pages": check.pages,
    }  # fmt: skip


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


async def checks(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID, *,
    before: dt.datetime | None, limit: int,
) -> dict[str, Any]:  # fmt: skip
    """The watch's checks, newest first, and what retention pruned of them."""
    automation = await service.get(db, principal, automation_id)
    found = await history_db.list_checks(
        db, automation_id=automation.id, workspace_id=principal.workspace_id,
        before=before or dt.datetime.max.replace(tzinfo=dt.UTC), limit=min(limit, MAX_CHECKS),
    )  # fmt: skip
    pruned = await history_db.get_history_pruned(
        db, automation_id=automation.id, workspace_id=principal.workspace_id
    )
    return {
        "watch": service.summary(automation),
        "checks": [check_view(c) for c in found],
        "pruned": pruned_note(pruned),
        "next_before": _iso(found[-1].scheduled_for) if len(found) == limit else None,
    }


def pruned_note(pruned: history_db.Pruned | None) -> dict[str, Any] | None:
    """What retention took, said: {before, days, text}; None when nothing was pruned."""
    if pruned is None or pruned.history_pruned_before is None:
        return None
    when, days = pruned.history_pruned_before, pruned.history_retention_days
    return {
        "before": when.isoformat(), "days": days,
        "text": f"Checks before {when:%Y-%m-%d} were pruned after {days} days.",
    }  # fmt: skip


async def check_pages(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID, run_id: uuid.UUID,
    against: uuid.UUID | None,
) -> dict[str, Any]:  # fmt: skip
    """A check's pages as they were, each with its diff against `against` (default: the
    previous check that read a page) in the before -> after form of the what-changed engine."""
    automation = await service.get(db, principal, automation_id)
    check = await _check(db, principal, automation.id, run_id)
    if against is None:
        against = await history_db.previous_read_check(
            db, automation_id=automation.id, workspace_id=principal.workspace_id,
            before=check.scheduled_for,
        )  # fmt: skip
    other = await _check(db, principal, automation.id, against) if against else None
    now = await history_db.get_check_pages(db, run_id=check.id, workspace_id=principal.workspace_id)
    then = []
    if other is not None:
        then = await history_db.get_check_pages(
            db, run_id=other.id, workspace_id=principal.workspace_id
        )
    earlier = {page.url: page for page in then}
    return {
        "check": check_view(check),
        "against": check_view(other) if other is not None else None,
        "pages": [_page_view(page, earlier.get(page.url)) for page in now],
    }


async def _check(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID, run_id: uuid.UUID
) -> history_db.Check:
    found = await history_db.get_check(
        db, run_id=run_id, automation_id=automation_id, workspace_id=principal.workspace_id
    )
    if found is None:
        raise errors.NotFound("No such check of this watch.")
    return found


def _page_view(page: history_db.CheckPage, earlier: history_db.CheckPage | None) -> dict[str, Any]:
    view: dict[str, Any] = {"url": page.url, "title": page.title, "kind": page.kind,
                            "digest": page.digest, "size": page.size, "diff": None}  # fmt: skip
    if page.kind == "items":
        now = items_of(page)
        view["content"] = "\n".join(now.values())
        if earlier is not None and earlier.kind == "items":
            view["diff"] = items_diff(items_of(earlier), now)
        return view
    view["content"] = text = content(page)
    if earlier is not None and earlier.kind == "page":
        view["diff"] = diff(content(earlier), text)
    return view


def items_of(page: history_db.CheckPage) -> dict[str, str]:
    """A search's results at a check: {identity: line}, in their order."""
    found = json.loads(content(page))
    return {str(key): str(line) for key, line in found.items()} if isinstance(found, dict) else {}


def diff(before: str, after: str) -> dict[str, Any]:
    """Two contents of a page compared by the what-changed engine: its lists (modified as
    {before, after}, added, removed, moved, counts) and each change in words."""
    then, now = changes.page_entry(before), changes.page_entry(after)
    found = changes.compare(then, now)
    return _listed(found)


def items_diff(before: dict[str, str], after: dict[str, str]) -> dict[str, Any]:
    """Two checks' results compared item by item (agent.results): a place whose rating or
    opening hours changed is modified (before -> after), a new one added, a gone one removed."""
    return _listed(results.compare({"items": before}, {"items": after}))


def _listed(found: list[Any]) -> dict[str, Any]:
    out = changes.lists(found)
    out["lines"] = [changes.said(c.kind, c.before, c.after) for c in found[: changes.DATA_ITEMS]]
    return out


async def prune(db: asyncpg.Pool, *, batch: int = 1000, rounds: int = 20) -> tuple[int, int]:
    """Delete checks past their workspace's retention (in batches) and the contents no check
    points at; (checks, contents) deleted."""
    total = 0
    for _ in range(rounds):
        runs, _marked = await history_db.prune_history(db, batch=batch)
        total += runs
        if runs < batch:
            break
    return total, await history_db.prune_page_contents(db)
