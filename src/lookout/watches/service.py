"""Watches: an automation bound to a chat (schedule trigger + chat_message action), nothing more."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import Collection
from typing import Any

import asyncpg

from lookout import errors, queue
from lookout.access.principals import Principal
from lookout.agent import conditions, router
from lookout.capabilities import registry, rendering
from lookout.db import repo
from lookout.notify import prefs, targets
from lookout.settings import Settings
from lookout.watches import schedule

MAX_MESSAGE = 2000


def summary(
    automation: repo.Automation,
    *,
    now: dt.datetime | None = None,
    reach: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """What a client shows for a watch; `sentence` is the confirmation a person reads (`reach`:
    the targets a change goes to now, when looked up: see described())."""
    trigger = automation.trigger
    cadence, timezone = str(trigger["cron"]), str(trigger.get("timezone", "UTC"))
    words = schedule.describe(cadence, timezone)
    notify = prefs.WatchNotify.of(automation.notify)
    condition = automation.action.get("condition")
    return {
        "id": str(automation.id),
        "chat_id": str(automation.chat_id),
        "message": automation.action.get("message"),
        "cadence": cadence,
        "timezone": timezone,
        "schedule": words,
        "enabled": automation.enabled,
        "next_run_at": automation.next_run_at.isoformat() if automation.next_run_at else None,
        "last_run_status": automation.last_status,
        "credits_per_month": automation.notify.get("credits_per_month"),
        "notify": notify.to_json(),
        "condition": condition,
        "condition_words": conditions.describe(condition) if condition else None,
        "last_value": automation.last_value,
        "last_condition_met": automation.last_condition_met,
        "sentence": f"I'll check this {words} and tell you {_what(condition)}."
        f"{prefs.sentence(notify, reach)}{_cost(automation.notify.get('credits_per_month'))}"
        " Say “stop watching” to stop.",
    }


async def described(db: asyncpg.Pool, automation: repo.Automation) -> dict[str, Any]:
    """summary() whose sentence promises a notification only when a target will get it."""
    notify = prefs.WatchNotify.of(automation.notify)
    if not notify.enabled:
        return summary(automation)
    reach = await targets.reached(db, automation.workspace_id, notify)
    return summary(automation, reach=reach)


def _what(condition: dict[str, Any] | None) -> str:
    return f"when {conditions.describe(condition)}" if condition else "what changed"


def _cost(credits: object) -> str:
    return f" That is about {credits} credits a month." if isinstance(credits, int) else ""


def estimate_credits(
    message: str, cadence: str, timezone: str, now: dt.datetime, rendered: Collection[str] = ()
) -> int:
    """Worst-case credits a month: runs, times the units of the pages the question reads (a page
    known to need a browser, in `rendered`, costs a rendered page's), times the price of the verb
    that reads pages."""
    urls = router.route(message).urls
    units = sum(rendering.RENDERED_UNITS if url in rendered else 1 for url in urls)
    return (
        schedule.runs_per_month(cadence, timezone, now)
        * max(1, units)
        * registry.serving(registry.READ).price
    )


def rendered_among(message: str, rendered: Collection[str]) -> list[str]:
    """The watched question's URLs known to need a browser (kept with the estimate)."""
    return [url for url in router.route(message).urls if url in rendered]


async def create(
    db: asyncpg.Pool,
    settings: Settings,
    principal: Principal,
    *,
    chat: repo.Chat,
    message: str,
    cadence: str,
    timezone: str = "UTC",
    notify: prefs.WatchNotify | None = None,
    condition: dict[str, Any] | None = None,
    rendered: Collection[str] = (),
) -> repo.Automation:
    """Watch `chat`: re-post `message` on `cadence`; replaces the chat's previous watch (keeping
    its notification settings unless `notify` is given; "notify me when …" turns them on).
    `rendered`: the pages the chat saw needed a browser (priced as rendered pages)."""
    principal.require("editor")
    creator = await _acting_user(db, principal)
    message = message.strip()
    if not 1 <= len(message) <= MAX_MESSAGE:
        raise errors.InvalidInput(f"The watched question has 1 to {MAX_MESSAGE} characters.")
    now = dt.datetime.now(dt.UTC)
    schedule.validate(cadence, timezone, min_minutes=settings.min_watch_minutes, now=now)
    credits = await asyncio.to_thread(estimate_credits, message, cadence, timezone, now, rendered)
    kept = {"credits_per_month": credits, "rendered_urls": rendered_among(message, rendered)}
    async with repo.transaction(db) as conn:
        previous = await repo.find_thread_automation(
            conn, workspace_id=chat.workspace_id, chat_id=chat.id
        )
        if notify is None:
            before = previous.notify if previous else None
            notify = await asyncio.to_thread(prefs.requested, message, before)
        await repo.delete_thread_automations(conn, workspace_id=chat.workspace_id, chat_id=chat.id)
        if await repo.count_watches(conn, workspace_id=chat.workspace_id) >= settings.max_watches:
            raise errors.Conflict(
                f"This workspace already has {settings.max_watches} watches; stop one first."
            )
        return await repo.insert_automation(
            conn,
            workspace_id=chat.workspace_id,
            created_by=creator,
            trigger={"type": "schedule", "cron": cadence, "timezone": timezone},
            action=action(chat.id, message, condition),
            next_run_at=schedule.next_fire(cadence, timezone, now),
            notify=prefs.stored(kept, notify),
        )


def action(chat_id: uuid.UUID, message: str, condition: dict[str, Any] | None) -> dict[str, Any]:
    """A watch's action: re-post `message` to the chat; `condition`, when set, decides alerts."""
    found: dict[str, Any] = {"type": "chat_message", "thread_id": str(chat_id), "message": message}
    return found | ({"condition": dict(condition)} if condition else {})


async def _acting_user(db: asyncpg.Pool, principal: Principal) -> uuid.UUID:
    """A watch runs as a person: the signed-in user, or the person behind the API key."""
    user_id = principal.user_id
    if user_id is None and principal.key_id is not None:
        user_id = await repo.get_key_acting_user(db, key_id=principal.key_id)
    if user_id is None:
        raise errors.Forbidden("Watches act as a person; this caller has none.")
    return user_id


async def get(db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID) -> repo.Automation:
    found = await repo.get_automation(
        db, automation_id=automation_id, workspace_id=principal.workspace_id
    )
    if found is None:
        raise errors.NotFound("No such watch in this workspace.")
    return found


async def stop(db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID) -> None:
    """Delete the watch; its chat is a normal chat again."""
    principal.require("editor")
    if not await repo.delete_automation(
        db, automation_id=automation_id, workspace_id=principal.workspace_id
    ):
        raise errors.NotFound("No such watch in this workspace.")


async def update_notify(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID, changes: dict[str, Any]
) -> repo.Automation:
    """Change a watch's notification settings: only the keys present in `changes`."""
    principal.require("editor")
    automation = await get(db, principal, automation_id)
    wanted = prefs.WatchNotify.of(automation.notify).merged(changes)
    await targets.check_chosen(db, principal.workspace_id, wanted.targets)
    updated = await repo.update_automation_notify(
        db, automation_id=automation.id, workspace_id=principal.workspace_id,
        notify=prefs.stored(automation.notify, wanted),
    )  # fmt: skip
    if updated is None:
        raise errors.NotFound("No such watch in this workspace.")
    return updated


async def find_for_thread(
    db: asyncpg.Pool, workspace_id: uuid.UUID, chat_id: uuid.UUID
) -> repo.Automation | None:
    return await repo.find_thread_automation(db, workspace_id=workspace_id, chat_id=chat_id)


async def run_now(db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID) -> uuid.UUID:
    """Queue a manual run now; returns its id."""
    principal.require("editor")
    automation = await get(db, principal, automation_id)
    run_id = await repo.insert_run(
        db, automation_id=automation.id, workspace_id=automation.workspace_id,
        scheduled_for=dt.datetime.now(dt.UTC), manual=True,
    )  # fmt: skip
    if run_id is None:
        raise errors.Conflict("A run of this watch was just queued; try again in a moment.")
    await asyncio.to_thread(queue.send, queue.CHAT_MESSAGE, str(run_id))
    return run_id


async def summaries(
    db: asyncpg.Pool, workspace_id: uuid.UUID, chat_ids: list[uuid.UUID]
) -> dict[uuid.UUID, dict[str, Any]]:
    """The watch of each listed chat that has one, paused ones included (one indexed query)."""
    found = await repo.watches_for_threads_any(db, workspace_id=workspace_id, chat_ids=chat_ids)
    return {automation.chat_id: summary(automation) for automation in found}


async def list_all(db: asyncpg.Pool, principal: Principal, *, limit: int) -> list[repo.Automation]:
    """The workspace's watches, paused ones included."""
    return await repo.list_watches(db, workspace_id=principal.workspace_id, limit=limit)


async def runs(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID, *, limit: int
) -> list[repo.Run]:
    """The latest runs of one watch of the workspace (NotFound for another's)."""
    automation = await get(db, principal, automation_id)
    return await repo.list_runs(
        db, automation_id=automation.id, workspace_id=principal.workspace_id, limit=limit
    )


async def get_run(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID, run_id: uuid.UUID
) -> repo.Run:
    """One run of one watch of the workspace (NotFound for another's)."""
    automation = await get(db, principal, automation_id)
    run = await repo.get_run(
        db, run_id=run_id, automation_id=automation.id, workspace_id=principal.workspace_id
    )
    if run is None:
        raise errors.NotFound("No such run of this watch.")
    return run
