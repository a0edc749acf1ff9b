"""A watch's condition judged run after run: met or not, and whether to notify (pure).

Notifications are edge-triggered: a threshold, a text or availability notifies once when it
becomes true and again only after it has been false. New items, any change and a change by a
percentage are events: each one notifies. A run that cannot read the subject says so; the third
such run in a row notifies once ("I can no longer find the price on this page"). `memory` is what
the thread state keeps between runs (bounded); a changed condition starts it afresh.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from lookout.agent import subject, wants

LOST_AFTER = 3
MAX_REMEMBERED_ITEMS = 300
_EVENTS = frozenset({"new_items", "any", "changes_by"})
_SYMBOL_FIRST = {"USD": "$", "GBP": "£"}
_SYMBOL_AFTER = {"EUR": "€", "JPY": "¥", "%": "%"}


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One run's verdict; `value` is what the run record keeps."""

    met: bool | None  # None: the subject could not be read
    notify: bool
    sentence: str
    value: Any
    previous: Any
    memory: dict[str, Any]


def evaluate(
    condition: wants.Condition, reading: subject.Reading, memory: dict[str, Any] | None
) -> Outcome:
    """Judge this run's `reading` against `condition`, given the last runs' `memory`."""
    memory = dict(memory or {})
    if memory.get("condition") != condition:
        memory = {"condition": condition}
    previous = memory.get("value")
    if not reading.found:
        return _lost(condition, memory, previous)
    memory.update(misses=0, lost=False)
    met, value, extra = _judge(condition, reading, memory)
    was = bool(memory.get("met"))
    first = "met" not in memory
    notify = (
        bool(met)
        and (not first or condition["kind"] not in _EVENTS)
        and (condition["kind"] in _EVENTS or not was)
    )
    memory.update(met=bool(met), value=value, **extra)
    sentence = _sentence(condition, met, value, previous, first)
    return Outcome(bool(met), notify, sentence, value, previous, memory)


def _lost(condition: wants.Condition, memory: dict[str, Any], previous: Any) -> Outcome:
    misses = int(memory.get("misses", 0)) + 1
    notify = misses >= LOST_AFTER and not memory.get("lost")
    memory.update(misses=misses, lost=bool(memory.get("lost")) or notify)
    what = subject_words(condition)
    sentence = (
        f"I can no longer find {what} on this page."
        if misses >= LOST_AFTER
        else f"I couldn't find {what} on the page this time."
    )
    return Outcome(None, notify, sentence, None, previous, memory)


def _judge(
    condition: wants.Condition, reading: subject.Reading, memory: dict[str, Any]
) -> tuple[bool, Any, dict[str, Any]]:
    kind, target = condition["kind"], condition.get("value")
    if kind in ("below", "above"):
        value = reading.value
        met = (
            value is not None
            and target is not None
            and (value < float(target) if kind == "below" else value > float(target))
        )
        return met, value, {"unit": reading.unit or condition.get("unit")}
    if kind == "changes_by":
        base = memory.get("base", reading.value)
        value = reading.value
        moved = abs(value - base) / abs(base) * 100 if value is not None and base else 0.0
        met = target is not None and moved >= float(target)
        return met, value, {"base": value if met else base, "unit": reading.unit}
    if kind in ("mentions", "absent", "in_stock", "custom"):  # custom: the model's yes / no
        present = bool(reading.present)
        return (present if kind != "absent" else not present), present, {}
    if kind == "new_items":  # items are remembered by a short hash: the state stays small
        seen = list(memory.get("items") or [])
        first = "items" not in memory
        new = [] if first else [item for item in reading.items if _key(item) not in seen]
        added = [_key(item) for item in (reading.items if first else new)]
        return bool(new), new[:20], {"items": (seen + added)[-MAX_REMEMBERED_ITEMS:]}
    changed = "digest" in memory and memory["digest"] != reading.digest
    return changed, None, {"digest": reading.digest}


def _key(item: str) -> str:
    return hashlib.sha256(" ".join(item.lower().split()).encode()).hexdigest()[:12]


def _sentence(condition: wants.Condition, met: bool, value: Any, previous: Any, first: bool) -> str:
    kind, wanted = condition["kind"], describe(condition)
    if kind in ("below", "above", "changes_by"):
        now = money(value, condition.get("unit"))
        if first:
            return f"It is {now} now; I'll tell you when {wanted}."
        was = f" (was {money(previous, condition.get('unit'))})" if previous != value else ""
        if met:
            return f"Now {now}{was}: {wanted}."
        return (
            f"Still {now}; I'll tell you when {wanted}."
            if not was
            else (f"Now {now}{was}; I'll tell you when {wanted}.")
        )
    if kind == "new_items":
        if first:
            return f"I'll tell you when {wanted}."
        if met:
            return "New: " + "; ".join(value) + "."
        return f"Nothing new yet; I'll tell you when {wanted}."
    if kind == "any":
        return "The page changed." if met else "No change yet."
    return f"Yes: {wanted} now." if met else f"Not yet; I'll tell you when {wanted}."


def subject_words(condition: wants.Condition) -> str:
    """ "the price", "the rating", "the availability", "the list", … of a condition."""
    kind, named = condition["kind"], condition.get("text")
    if kind in ("below", "above", "changes_by"):
        return f"the {named}" if named else "the price"
    if kind == "in_stock":
        return "the availability"
    if kind == "custom":
        return "an answer"
    if kind == "new_items":
        return f"the list of {named}" if named else "the list"
    return "the page's text"


def describe(condition: wants.Condition | None) -> str:
    """The condition in words: "the price is below 50 €", "the page mentions “remote”"."""
    if condition is None:
        return "anything changes"
    kind, value, text, unit = (condition.get(k) for k in ("kind", "value", "text", "unit"))
    if kind in ("below", "above"):
        return f"{subject_words(condition)} is {kind} {money(value, unit)}"
    if kind == "changes_by":
        return f"{subject_words(condition)} changes by {money(value, '%')} or more"
    if kind == "mentions":
        return f"the page mentions “{text}”"
    if kind == "absent":
        return f"“{text}” is gone from the page"
    if kind == "in_stock":
        return "it is in stock"
    if kind == "new_items":
        return f"new {text or 'items'} appear"
    if kind == "any":
        return "anything changes"
    return str(text or kind)  # custom: the condition in the person's words


def money(value: Any, unit: str | None) -> str:
    """57 €, $57, £57.50, 5 %, 4.2."""
    if not isinstance(value, int | float):
        return "?"
    shown = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
    if unit in _SYMBOL_FIRST:
        return f"{_SYMBOL_FIRST[unit]}{shown}"
    if unit in _SYMBOL_AFTER:
        return f"{shown} {_SYMBOL_AFTER[unit]}"
    return f"{shown} {unit}" if unit else shown
