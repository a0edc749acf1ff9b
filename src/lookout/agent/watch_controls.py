"""describe / pause / resume / edit the chat's watch from a routed message (rule planner).

A question about the watch only reads it: it never starts, replaces or stops one.
"""

from __future__ import annotations

from typing import Any

from lookout import errors
from lookout.agent import router
from lookout.agent.context import TurnContext

HANDLED = frozenset({"describe_watch", "pause_watch", "resume_watch", "edit_watch"})
NONE = "This chat isn't being watched. Ask me to watch a page, e.g. “watch <url> every day”."


async def run(route: router.Route, ctx: TurnContext) -> str:
    """The answer to a describe / pause / resume / edit control."""
    assert ctx.watches is not None
    try:
        if route.control == "describe_watch":
            return await ctx.watches.describe() or NONE
        if route.control in ("pause_watch", "resume_watch"):
            return await _toggle(route.control == "resume_watch", ctx)
        return await _edit(route, ctx)
    except errors.LookoutError as exc:
        return f"I couldn't change the watch: {exc.message}"


async def _toggle(enabled: bool, ctx: TurnContext) -> str:
    assert ctx.watches is not None
    shown = await ctx.watches.set_enabled(enabled)
    if shown is None:
        return NONE
    if not enabled:
        return "I've paused watching; its history is kept. Say “resume watching” to start again."
    return f"Watching again: {shown['schedule']}. Next check at {shown['next_run_at']}."


def changes_of(route: router.Route) -> dict[str, Any]:
    """What an edit_watch route changes: cadence and its timezone, and/or the condition."""
    changes: dict[str, Any] = {}
    if route.cadence is not None:
        changes["cadence"] = route.cadence
    if route.timezone != "UTC":  # a zone not stated keeps the watch's own
        changes["timezone"] = route.timezone
    if route.condition is not None:
        changes["condition"] = route.condition
    return changes


async def _edit(route: router.Route, ctx: TurnContext) -> str:
    assert ctx.watches is not None
    changes = changes_of(route)
    if not changes:
        return (
            "Tell me what to change: for example “check it hourly instead” or “only when it's "
            "below 40”."
        )
    shown = await ctx.watches.edit(changes)
    if shown is None:
        return NONE
    what = f" and tell you when {shown['condition_words']}" if shown.get("condition_words") else ""
    return f"Done: I'll check this {shown['schedule']}{what}. Its history is kept."
