"""Pause, resume and edit a watch in place: never delete-and-recreate, so its id, run history,
page versions and deliveries stay; and what a person reads when they ask about it."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access.principals import Principal
from lookout.agent import conditions
from lookout.db import repo
from lookout.settings import Settings
from lookout.watches import schedule, service

EDITABLE = frozenset({"message", "cadence", "timezone", "condition", "enabled"})


async def find(
    db: asyncpg.Pool, principal: Principal, chat_id: uuid.UUID
) -> repo.Automation | None:
    """The chat's watch, running or paused."""
    return await repo.find_thread_watch(db, workspace_id=principal.workspace_id, chat_id=chat_id)


async def set_enabled(
    db: asyncpg.Pool,
    settings: Settings,
    principal: Principal,
    automation_id: uuid.UUID,
    enabled: bool,
) -> repo.Automation:
    """Pause (False) or resume (True); a resumed watch next runs at its next fire from now."""
    principal.require("editor")
    automation = await service.get(db, principal, automation_id)
    next_run = None
    if enabled and not automation.enabled:
        if (
            await repo.count_watches(db, workspace_id=principal.workspace_id)
            >= settings.max_watches
        ):
            raise errors.Conflict(
                f"This workspace already has {settings.max_watches} watches; stop one first."
            )
        trigger = automation.trigger
        next_run = schedule.next_fire(
            str(trigger["cron"]), str(trigger.get("timezone", "UTC")), dt.datetime.now(dt.UTC)
        )
    updated = await repo.set_automation_enabled(
        db,
        automation_id=automation.id,
        workspace_id=principal.workspace_id,
        enabled=enabled,
        next_run_at=next_run,
    )
    if updated is None:
        raise errors.NotFound("No such watch in this workspace.")
    return updated


async def edit(
    db: asyncpg.Pool,
    settings: Settings,
    principal: Principal,
    automation_id: uuid.UUID,
    changes: dict[str, Any],
) -> repo.Automation:
    """Change the keys of `changes` (message, cadence, timezone, condition, enabled) in place."""
    principal.require("editor")
    unknown = set(changes) - EDITABLE
    if unknown or not changes:
        raise errors.InvalidInput(
            "Send at least one of message, cadence, timezone, condition, enabled.",
            fields={key: ["unknown field"] for key in unknown},
        )
    automation = await service.get(db, principal, automation_id)
    if set(changes) - {"enabled"}:
        automation = await _rewrite(db, settings, automation, changes)
    if "enabled" in changes and bool(changes["enabled"]) != automation.enabled:
        automation = await set_enabled(db, settings, principal, automation.id, changes["enabled"])
    return automation


async def _rewrite(
    db: asyncpg.Pool, settings: Settings, automation: repo.Automation, changes: dict[str, Any]
) -> repo.Automation:
    trigger, action = automation.trigger, automation.action
    cadence = str(changes.get("cadence") or trigger["cron"])
    timezone = str(changes.get("timezone") or trigger.get("timezone", "UTC"))
    message = str(changes.get("message") or action["message"]).strip()
    if not 1 <= len(message) <= service.MAX_MESSAGE:
        raise errors.InvalidInput(
            f"The watched question has 1 to {service.MAX_MESSAGE} characters."
        )
    condition = changes["condition"] if "condition" in changes else action.get("condition")
    before = action.get("condition") or {}
    if condition and not condition.get("unit") and condition.get("kind") == before.get("kind"):
        condition = {**condition, "unit": before.get("unit")}  # "below 40" keeps its euros
    now = dt.datetime.now(dt.UTC)
    schedule.validate(cadence, timezone, min_minutes=settings.min_watch_minutes, now=now)
    rendered = automation.notify.get("rendered_urls") or []
    credits = await asyncio.to_thread(
        service.estimate_credits, message, cadence, timezone, now, rendered
    )
    updated = await repo.update_automation_watch(
        db,
        automation_id=automation.id,
        workspace_id=automation.workspace_id,
        trigger={**trigger, "cron": cadence, "timezone": timezone},
        action=service.action(automation.chat_id, message, condition),
        next_run_at=schedule.next_fire(cadence, timezone, now),
        notify={
            **automation.notify,
            "credits_per_month": credits,
            "rendered_urls": service.rendered_among(message, rendered),
        },
    )
    if updated is None:
        raise errors.NotFound("No such watch in this workspace.")
    return updated


def description(automation: repo.Automation, viewer: str | None = None) -> str:
    """What the chat says to "what are you watching?": question, condition, cadence and zone,
    next check (in the watch's zone, and in `viewer`'s, the asker's browser's, when another),
    last result, how to stop."""
    shown = service.summary(automation)
    condition = automation.action.get("condition")
    words, zone = str(shown["schedule"]), str(shown["timezone"])
    zoned = words if zone in words or zone == "UTC" else f"{words} ({zone})"
    said = [f"I'm watching “{shown['message']}”, {zoned}."]
    said.append(
        f"I'll tell you when {conditions.describe(condition)}."
        if condition
        else "I'll tell you what changed each time."
    )
    if not automation.enabled:
        said.append("It is paused: say “resume watching” to start it again.")
    elif automation.next_run_at is not None:
        said.append(next_check(automation.next_run_at, zone, viewer))
    said.append(_last(automation, condition))
    said.append("Say “pause watching”, “check it hourly instead” or “stop watching” to change it.")
    return " ".join(s for s in said if s)


def next_check(at: dt.datetime, zone: str, viewer: str | None) -> str:
    """ "Next check: 2026-12-03 09:00 America/New_York (15:00 your time, Europe/Paris)." """
    theirs = at.astimezone(schedule.zone(zone))
    said = f"Next check: {theirs:%Y-%m-%d %H:%M} {zone}"
    if viewer and viewer != zone:
        try:
            mine = at.astimezone(schedule.zone(viewer))
        except errors.InvalidInput:  # the browser's zone is a hint: an unknown one is left out
            return said + "."
        day = "" if mine.date() == theirs.date() else f"{mine:%Y-%m-%d} "
        said += f" ({day}{mine:%H:%M} your time, {viewer})"
    return said + "."


def _last(automation: repo.Automation, condition: dict[str, Any] | None) -> str:
    if automation.last_status is None:
        return "It hasn't run yet."
    value = automation.last_value
    if condition and isinstance(value, int | float) and not isinstance(value, bool):
        value_words = conditions.money(value, condition.get("unit"))
        met = " (met)" if automation.last_condition_met else " (not met)"
        return f"Last check: {automation.last_status}, read {value_words}{met}."
    return f"Last check: {automation.last_status}."
