"""What a scheduled turn's looks found, as stream parts: a `data-change` part per changed source
(what notifications are made of) and one `data-diff` part, the run's result
`{changed, modified, added, removed, moved, counts, sources}` that is kept on the run."""

from __future__ import annotations

from typing import Any

from lookout import parts
from lookout.agent import changes

DIFF_PART = "data-diff"


def parts_of(diffs: list[dict[str, Any]]) -> list[parts.Part]:
    changed = [data for data in diffs if data["changed"]]
    out: list[parts.Part] = [
        {"type": "data-change", "data": data} for data in changes.trimmed(changed)
    ]
    if diffs:
        out.append({"type": DIFF_PART, "data": changes.run_data(diffs)})
    return out


def run_data(emitted: list[parts.Part]) -> dict[str, Any] | None:
    """The run's result among a turn's parts (None when it compared nothing: a first look)."""
    found = [part for part in emitted if part.get("type") == DIFF_PART]
    return dict(found[-1]["data"]) if found else None
