"""Bounded structuredContent: a tool result too large for the client is shortened, keeping its
shape (every key stays; long strings are cut, long lists lose their last items) and saying so
with `truncated: true` and a `truncation` note that tells how to get the rest.

Pure: sizes are the characters of the compact JSON, searched by bisection, so a result of any
size costs a few dozen serializations, never one per dropped item."""

from __future__ import annotations

import json
from typing import Any

MARK = "…"
MIN_STRING = 200  # when lists must shrink too, strings keep at least this much


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def bound(value: dict[str, Any], limit: int, hint: str) -> tuple[dict[str, Any], bool]:
    """(`value` within `limit` characters, whether it was shortened)."""
    original = size(value)
    if original <= limit:
        return value, False
    note = {"original_chars": original, "limit_chars": limit, "how_to_get_the_rest": hint}
    longest, widest = _extent(value)

    def shaped(strings: int, items: int) -> dict[str, Any]:
        return _marked(_cut(value, strings, items), note, strings, items)

    def fits(strings: int, items: int) -> bool:
        return size(shaped(strings, items)) <= limit

    items: int | None = widest
    if not fits(0, widest):
        items = _largest(lambda k: fits(min(MIN_STRING, longest), k), 0, widest)
    if items is None:
        return {"truncated": True, "truncation": note}, True
    strings = _largest(lambda s: fits(s, items), 0, longest)
    return shaped(strings or 0, items), True


def _largest(ok: Any, low: int, high: int) -> int | None:
    """The largest n in [low, high] with ok(n), ok being monotone (None when none is)."""
    found = None
    while low <= high:
        middle = (low + high) // 2
        if ok(middle):
            found, low = middle, middle + 1
        else:
            high = middle - 1
    return found


def _extent(value: Any) -> tuple[int, int]:
    """(the longest string, the longest list) anywhere in `value`."""
    if isinstance(value, str):
        return len(value), 0
    children = value.values() if isinstance(value, dict) else value
    if not isinstance(value, dict | list):
        return 0, 0
    longest, widest = 0, len(value) if isinstance(value, list) else 0
    for child in children:
        text, items = _extent(child)
        longest, widest = max(longest, text), max(widest, items)
    return longest, widest


def _cut(value: Any, strings: int, items: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= strings else value[:strings] + MARK
    if isinstance(value, dict):
        return {key: _cut(child, strings, items) for key, child in value.items()}
    if isinstance(value, list):
        return [_cut(child, strings, items) for child in value[:items]]
    return value


def _marked(
    value: dict[str, Any], note: dict[str, Any], strings: int, items: int
) -> dict[str, Any]:
    detail = {**note, "strings_cut_to": strings, "lists_cut_to": items}
    return {**value, "truncated": True, "truncation": detail}
