"""A scheduled turn of a watch with a condition: read the subject, judge it, say met or not.

The verdict goes out as a `data-condition` part (met, notify, the value read and the previous
one); the run records it and notifies only when it says so (watches.runner). The what-changed of
the page stays in the answer, after the verdict.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lookout.agent import conditions, setup, subject
from lookout.agent.context import TurnContext
from lookout.schema import watches as watch_schema

# The model's yes / no on a condition in words for a page's text (None: it could not say).
Oracle = Callable[[TurnContext, str, str], Awaitable[bool | None]]


async def judge(
    question: str,
    pages: list[dict[str, Any]],
    memory: dict[str, Any] | None,
    ctx: TurnContext,
    oracle: Oracle | None = None,
) -> tuple[str, dict[str, Any]]:
    """(the verdict sentence, the memory to keep) for this run of the watch's condition."""
    assert ctx.condition is not None
    condition, _ = setup.usable(ctx.condition, ctx)
    page = pages[0] if pages else {"error": "unread"}
    if condition["kind"] == watch_schema.CUSTOM and oracle is not None and not page.get("error"):
        said = await oracle(ctx, str(condition.get("text")), str(page.get("markdown") or ""))
        reading = subject.Reading(said is not None, present=said, source="model")
    else:
        reading = subject.read(condition, page, question)
    outcome = conditions.evaluate(condition, reading, memory)
    data = {
        "condition": condition,
        "met": outcome.met,
        "notify": outcome.notify,
        "value": outcome.value,
        "previous": outcome.previous,
        "sentence": outcome.sentence,
        "lost": outcome.met is None,
        "url": page.get("url"),
        "title": page.get("title") or "",
        "words": conditions.describe(condition),
    }
    await ctx.emit({"type": "data-condition", "data": data})
    return outcome.sentence, outcome.memory
