"""The watch tools as the LLM planner sees them: start (with a condition and a timezone),
stop, refresh, describe, pause, resume, edit. The condition schema is the router's
`{kind, value, text, unit}`; a `custom` kind (a condition in words) is judged by the model."""

from __future__ import annotations

from typing import Any

import marshmallow

from lookout import errors
from lookout.agent import planner_rules
from lookout.agent.context import TurnContext
from lookout.schema import watches as watch_schema

NAMES = (
    "start_watch",
    "stop_watch",
    "refresh_watch",
    "describe_watch",
    "pause_watch",
    "resume_watch",
    "edit_watch",
)
_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
CONDITION: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "What to tell about; null: any change. below/above: `value` (a number; `unit` "
    "a currency code or %, `text` the subject when not a price); mentions/absent: `text`; "
    "new_items: `text` the kind of item; in_stock; changes_by: `value` a percentage; custom: a "
    "condition in words in `text`, judged on each run.",
    "properties": {
        "kind": {"type": "string", "enum": [*watch_schema.CONDITION_KINDS, watch_schema.CUSTOM]},
        "value": {"type": ["number", "null"]},
        "text": {"type": ["string", "null"], "maxLength": 200},
        "unit": {"type": ["string", "null"], "maxLength": 8},
    },
    "required": ["kind"],
    "additionalProperties": False,
}
_CADENCE = {
    "type": "string",
    "description": "A 5-field cron in `timezone` (the router's cadence "
    "when it gave one), or plain words such as 'daily' or 'every 3 hours'.",
}
_ZONE = {"type": "string", "description": "IANA timezone of the cadence, e.g. Europe/Berlin."}
SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "start_watch": (
        "Keep watching: re-ask the user's request in this chat on the cadence they asked for "
        "and report what changed, or only when `condition` becomes true. Use once, after "
        "answering their standing request.",
        {
            "type": "object",
            "properties": {"condition": CONDITION},
            "additionalProperties": False,
        },
    ),
    "stop_watch": ("Stop watching this chat; it becomes a normal chat again.", _NO_ARGS),
    "refresh_watch": ("Run this chat's watch now; its result appears in the chat.", _NO_ARGS),
    "describe_watch": (
        "What this chat's watch is: question, condition, cadence, next check, "
        "last result. Use for any question about the watch.",
        _NO_ARGS,
    ),
    "pause_watch": ("Pause this chat's watch, keeping it and its history.", _NO_ARGS),
    "resume_watch": ("Resume this chat's paused watch.", _NO_ARGS),
    "edit_watch": (
        "Change this chat's watch in place (its history stays): any of question, cadence, "
        "timezone, condition.",
        {
            "type": "object",
            "properties": {
                "question": {"type": "string"},
                "cadence": _CADENCE,
                "timezone": _ZONE,
                "condition": CONDITION,
            },
            "additionalProperties": False,
        },
    ),
}


def condition_of(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The tool call's condition, validated like the REST door's (InvalidInput otherwise)."""
    raw = arguments.get("condition")
    if raw is None:
        return None
    try:
        loaded: dict[str, Any] = watch_schema.ConditionSchema().load(raw)
    except marshmallow.ValidationError as exc:
        details = exc.normalized_messages()  # type: ignore[no-untyped-call]
        said = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in dict(details).items())
        raise errors.InvalidInput(f"The condition is not valid ({said}).", fields=details) from None
    return None if loaded["kind"] == "any" and not loaded.get("text") else loaded


async def run(ctx: TurnContext, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One watch tool call's result for the model."""
    assert ctx.watches is not None
    try:
        if name == "start_watch":
            question = str(arguments.get("question") or "").strip()
            cron, zone = cron_of(str(arguments.get("cadence") or ""), arguments, ctx)
            return await ctx.watches.start(
                question, cron, timezone=zone, condition=condition_of(arguments)
            )
        if name == "edit_watch":
            return await _edit(ctx, arguments)
        if name == "describe_watch":
            return {"description": await ctx.watches.describe() or "This chat isn't watched."}
        if name in ("pause_watch", "resume_watch"):
            found = await ctx.watches.set_enabled(name == "resume_watch")
        else:
            found = await (ctx.watches.stop() if name == "stop_watch" else ctx.watches.refresh())
    except errors.LookoutError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    return found or {"result": "This chat isn't being watched."}


async def _edit(ctx: TurnContext, arguments: dict[str, Any]) -> dict[str, Any]:
    assert ctx.watches is not None
    changes: dict[str, Any] = {}
    if arguments.get("question"):
        changes["message"] = str(arguments["question"])
    if arguments.get("cadence"):
        changes["cadence"], changes["timezone"] = cron_of(str(arguments["cadence"]), arguments, ctx)
    elif arguments.get("timezone"):
        changes["timezone"] = str(arguments["timezone"])
    if "condition" in arguments:
        changes["condition"] = condition_of(arguments)
    found = await ctx.watches.edit(changes)
    return found or {"result": "This chat isn't being watched."}


def cron_of(cadence: str, arguments: dict[str, Any], ctx: TurnContext) -> tuple[str, str]:
    """(cron, timezone): a cron as given, else the router's reading of the words."""
    zone = str(arguments.get("timezone") or "")
    if len(cadence.split()) == 5:
        return cadence, zone or "UTC"
    route = planner_rules.read(f"keep watching it {cadence}".strip(), ctx)
    return route.cadence or "0 9 * * *", zone or route.timezone
