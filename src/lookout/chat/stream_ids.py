"""Redis stream ids (`<millis>-<seq>`, each part an unsigned 64-bit number), read one way.

An id from a client (the Last-Event-ID header of /api/chats/{id}/stream and /events) is checked
here before it reaches Redis: `99999999999999999999-1` passed a digits-only check, Redis refused
it after the SSE headers were out, and the 500 envelope was written into the stream (issue #22).
So are non-ASCII digits (`str.isdigit` takes Arabic-Indic digits and `²`, Redis does not) and
the largest id, after which XRANGE has nothing to start from. Pure: no Redis here.
"""

from __future__ import annotations

import re

MAX_PART = 2**64 - 1  # Redis: both parts are unsigned 64-bit integers
MAX_TEXT = 2 * len(str(MAX_PART)) + 1
ZERO = "0-0"
_ID = re.compile(r"([0-9]{1,20})-([0-9]{1,20})", re.ASCII)

Key = tuple[int, int]


def parse(text: str | None) -> Key | None:
    """(millis, seq) of a complete stream id after which events can be read, or None."""
    if not text or len(text) > MAX_TEXT:
        return None
    match = _ID.fullmatch(text)
    if match is None:
        return None
    millis, seq = int(match.group(1)), int(match.group(2))
    if millis > MAX_PART or seq > MAX_PART or (millis, seq) == (MAX_PART, MAX_PART):
        return None
    return millis, seq


def valid(text: str | None) -> str | None:
    """`text` in canonical form (no leading zeros) when it is an id to read after, else None."""
    key = parse(text)
    return None if key is None else f"{key[0]}-{key[1]}"


def key(entry_id: str) -> Key:
    """(millis, seq) of an id Redis gave us, for ordering; ValueError for anything else."""
    found = parse(entry_id)
    if found is None:
        raise ValueError(f"not a stream id: {entry_id[:MAX_TEXT]!r}")
    return found


def previous(entry_id: str) -> str:
    """The largest id smaller than `entry_id` (XREAD reads strictly after its id); 0-0 at 0-0."""
    millis, seq = key(entry_id)
    if seq:
        return f"{millis}-{seq - 1}"
    return f"{millis - 1}-{MAX_PART}" if millis else ZERO
