"""The setup flow of a watch with a condition: sample → propose → validate → run.

A standing request with a condition first reads the page once and proposes, in one message,
what it will watch and what it reads now, with a `data-watch-proposal` part (Start / Change /
Cancel on the web page). The proposal lives in the thread state, so the answer may reach any web
process: "yes" starts it, "hourly" / "below 45" amends it, "cancel" drops it, anything else drops
it and is read as a new message.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from lookout import errors
from lookout.agent import answers, cadence, conditions, router, subject, wants
from lookout.agent.context import TurnContext
from lookout.schema import watches as watch_schema

_YES = re.compile(
    r"^\W*(?:yes|yep|yeah|yup|sure|ok(?:ay)?|start(?:\s+it)?|go(?:\s+ahead)?|do\s+it|please\s+do"
    r"|sounds\s+good|confirm(?:ed)?|y|let's\s+go|perfect|great)\b(?:\W+(?:please|thanks|thank\s+you"
    r"|start(?:\s+it)?|go\s+ahead|do\s+it))*\W*$",
    re.IGNORECASE,
)
_NO = re.compile(
    r"^\W*(?:no|nope|nah|cancel|never\s*mind|forget\s+it|don'?t|stop|not\s+now|skip\s+it)\b",
    re.IGNORECASE,
)
SAMPLE_CHARS = 20_000
NO_MODEL = (
    "I can't judge “{text}” without a language model here, so I'll tell you about any change "
    "to the page instead."
)


@dataclasses.dataclass(frozen=True)
class Proposed:
    """What one turn proposes: the sentence, the part's data, and what the state keeps."""

    sentence: str
    part: dict[str, Any]
    kept: dict[str, Any]


def proposable(route: router.Route) -> bool:
    """A standing request whose condition is more than "any change": it goes through the setup
    flow; one without (or with `any`) starts at once, as before conditions."""
    return bool(route.urls) and route.condition is not None and route.condition["kind"] != "any"


def judged_by_model(condition: wants.Condition | None, ctx: TurnContext) -> bool:
    """A condition in words, and a model to judge it (the LLM planner's endpoint, as
    planner_llm.enabled reads it)."""
    settings = ctx.services.settings
    custom = condition is not None and condition["kind"] == watch_schema.CUSTOM
    return custom and bool(settings.llm_base_url or settings.openai_api_key)


def usable(condition: wants.Condition, ctx: TurnContext) -> tuple[wants.Condition, str | None]:
    """The condition the rule planner can judge, and a note when it had to fall back to any."""
    if condition["kind"] != watch_schema.CUSTOM or judged_by_model(condition, ctx):
        return condition, None
    fallback = {"kind": "any", "value": None, "text": None, "unit": None}
    return fallback, NO_MODEL.format(text=condition.get("text") or "that")


def propose(
    question: str,
    route: router.Route,
    page: dict[str, Any] | None,
    ctx: TurnContext,
    *,
    note: str | None = None,
) -> Proposed:
    """The proposal for `question` from the page read now (None: it could not be read)."""
    assert route.condition is not None and route.cadence is not None
    condition, fallback = usable(route.condition, ctx)
    reading = subject.read(condition, page or {"error": "unread"}, question)
    outcome = conditions.evaluate(condition, reading, None)
    name = reading.name or (page or {}).get("title") or _host(route.urls)
    words = cadence.describe(route.cadence, route.timezone)
    zone = "" if route.timezone in words else f" ({route.timezone})"
    now = _now_words(condition, reading, outcome)
    said = [
        f"I'll check *{name}* {words}{zone} and tell you when "
        f"{conditions.describe(condition)}{now}. Shall I start?"
    ]
    said += [text for text in (fallback, note) if text]
    part = {
        "status": "proposed",
        "question": question,
        "cadence": route.cadence,
        "timezone": route.timezone,
        "schedule": words,
        "condition": condition,
        "condition_words": conditions.describe(condition),
        "current": outcome.value,
        "found": reading.found,
        "title": name,
        "urls": list(route.urls),
        "note": fallback,
    }
    kept = {
        "question": question,
        "cadence": route.cadence,
        "timezone": route.timezone,
        "condition": route.condition,
        "urls": list(route.urls),
        "title": name,
        "page": _sample(page),
        "memory": outcome.memory,
    }
    return Proposed(" ".join(said), part, kept)


def _sample(page: dict[str, Any] | None) -> dict[str, Any] | None:
    """The page as sampled, bounded, so an amended proposal reads it again without a fetch."""
    if page is None or page.get("error"):
        return None
    return {
        "markdown": (page.get("markdown") or "")[:SAMPLE_CHARS],
        "data": page.get("data"),
        "title": page.get("title"),
    }


def _now_words(
    condition: wants.Condition, reading: subject.Reading, outcome: conditions.Outcome
) -> str:
    if not reading.found:
        return f" — I can't find {conditions.subject_words(condition)} on the page yet"
    if condition["kind"] in ("below", "above", "changes_by"):
        already = " (already met)" if outcome.met and condition["kind"] != "changes_by" else ""
        return f" — it is {conditions.money(outcome.value, reading.unit)} now{already}"
    if condition["kind"] in ("in_stock", "mentions", "absent"):
        return " — that is the case already" if outcome.met else " — it isn't yet"
    return ""


def _host(links: tuple[str, ...]) -> str:
    return answers.host(links[0]) if links else "the page"


async def answer(
    kept: dict[str, Any], text: str, ctx: TurnContext
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None] | None:
    """(what to say, the proposal still open, the memory of a started watch) for a reply to a
    proposal; None when the reply is about something else (the proposal is dropped)."""
    if _YES.search(text):
        return await _start(kept, ctx), None, dict(kept.get("memory") or {})
    amended = await _amend(kept, text, ctx)
    if amended is not None:
        return amended
    if _NO.search(text):
        await ctx.emit({"type": "data-watch-proposal", "data": {"status": "cancelled"}})
        return "OK, I won't watch it.", None, None
    return None


async def _start(kept: dict[str, Any], ctx: TurnContext) -> str:
    if ctx.watches is None:
        return "Watching isn't available in this conversation."
    try:
        summary = await ctx.watches.start(
            str(kept["question"]),
            str(kept["cadence"]),
            timezone=str(kept["timezone"]),
            condition=kept["condition"],
        )
    except errors.LookoutError as exc:
        return f"I couldn't start watching: {exc.message}"
    await ctx.emit({"type": "data-watch-proposal", "data": {"status": "started"}})
    return str(summary["sentence"])


async def _amend(
    kept: dict[str, Any], text: str, ctx: TurnContext
) -> tuple[str, dict[str, Any], None] | None:
    settings = ctx.services.settings
    change = router.amendment(text, now=ctx.now, min_interval_minutes=settings.min_watch_minutes)
    if change.cadence is None and change.condition is None and change.timezone is None:
        return None
    condition = dict(kept["condition"])
    if change.condition is not None:
        condition = {**condition, **change.condition}
        if change.condition.get("unit") is None and condition["kind"] == kept["condition"]["kind"]:
            condition["unit"] = kept["condition"].get("unit")
    route = router.Route(
        "standing",
        tuple(kept["urls"]),
        condition=condition,
        cadence=change.cadence.cron if change.cadence else kept["cadence"],
        timezone=change.timezone or kept["timezone"],
    )
    proposed = propose(str(kept["question"]), route, kept.get("page"), ctx)
    await ctx.emit({"type": "data-watch-proposal", "data": proposed.part})
    return proposed.sentence, proposed.kept, None
