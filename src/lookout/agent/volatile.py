"""Lines a page changes by itself: one that changed on each of the last three scheduled checks
while nothing else did (a clock, a view counter, a rotating quote) is marked volatile and left
out of later reports. The chat says so once, in plain words, with how to undo it ("include the
Updated line again"). Kept in the source's snapshot in the thread state, bounded.

A change is recognised by its signature (agent.diffing): a modified line by its words with the
changing ones blanked, an added or removed line by the line before it.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from lookout.agent import diffing, marking

RUNS = 3
MAX_RECORDED = 10  # changes a check may have for its lines to be candidates
MAX_VOLATILE = 10  # marked lines per source
MANY = "*"
UNDO = re.compile(
    r"\b(?:include|report|show|mention)\b.{0,60}\b(?:line|lines|clock|counter|it|that|them"
    r"|those)\b.{0,20}\bagain\b|\bstop (?:ignoring|leaving out|skipping)\b"
    r"|\b(?:don'?t|do not) (?:ignore|leave out|skip)\b",
    re.IGNORECASE | re.DOTALL,
)
_WORD = re.compile(r"\w[\w'\u2019-]*")


def carried(prior: dict[str, Any] | None) -> dict[str, Any]:
    """The volatile state a snapshot carries to the next one."""
    if not prior:
        return {"recent": [], "volatile": {}}
    return {
        "recent": list(prior.get("recent") or []),
        "volatile": dict(prior.get("volatile") or {}),
    }


def observe(
    found: list[diffing.Change], kept: dict[str, Any], *, scheduled: bool
) -> tuple[list[diffing.Change], dict[str, Any], str]:
    """(the changes to report, the volatile state to keep, the note to say once)."""
    marked = dict(kept.get("volatile") or {})
    shown = [change for change in found if change.signature not in marked]
    recent = list(kept.get("recent") or [])
    if not scheduled:
        return shown, {"recent": recent, "volatile": marked}, ""
    seen = sorted({(change.signature, _value(change)) for change in shown})
    recent = [*recent, [list(item) for item in seen] if len(seen) <= MAX_RECORDED else [MANY]]
    recent = recent[-RUNS:]
    if not _self_changing(recent):
        return shown, {"recent": recent, "volatile": marked}, ""
    labels = {change.signature: label(change) for change in shown}
    for signature, name in labels.items():
        if len(marked) < MAX_VOLATILE:
            marked[signature] = name
    return shown, {"recent": [], "volatile": marked}, note(sorted(set(labels.values())))


def _value(change: diffing.Change) -> str:
    value = change.after if change.after is not None else change.before
    return hashlib.blake2b(str(value).encode("utf-8"), digest_size=6).hexdigest()


def _self_changing(recent: list[list[Any]]) -> bool:
    """The same lines, and only they, changed on each of the last RUNS checks, each to a value
    it had not had in them: a clock or a counter. A page flipping between two versions is not
    (its values come back; notify.versions suppresses the flaps and reports a new version)."""
    if len(recent) < RUNS or not recent[0] or MANY in recent[0]:
        return False
    signatures = [sorted(item[0] for item in run) for run in recent]
    if any(run != signatures[0] for run in signatures):
        return False
    for signature in signatures[0]:
        values = [item[1] for run in recent for item in run if item[0] == signature]
        if len(set(values)) < len(values):
            return False
    return True


def label(change: diffing.Change) -> str:
    """A few words naming the line: its unchanging words, "…" for the changing ones."""
    if change.kind == "modified" and change.before is not None and change.after is not None:
        words = marking.template(change.before, change.after).replace(marking.BLANK, "…")
    else:
        words = change.after or change.before or ""
    words = " ".join(words.split()[:8])
    return words[:80]


def name(text: str) -> str:
    """The first word of a label, as the undo phrase names the line."""
    found = _WORD.search(text)
    return found.group(0) if found else "changing"


def note(labels: list[str]) -> str:
    lines = "; ".join(f"“{text}”" for text in labels)
    which = "This line" if len(labels) == 1 else "These lines"
    undo = f"include the {name(labels[0])} line again"
    return (
        f"{which} changed on each of the last {RUNS} checks while nothing else did: {lines}. "
        f"It looks like the page changes it by itself, so I'll leave it out from now on. "
        f"Say “{undo}” to have it reported again."
    )


def undo(text: str, pages: dict[str, Any]) -> str | None:
    """Report volatile lines again when `text` asks so ("include the Updated line again"):
    the named ones, or all when none is named. None when it does not ask, or nothing is marked."""
    if not UNDO.search(text):
        return None
    marked = [(key, sig, label) for key, page in pages.items()
              for sig, label in (page.get("volatile") or {}).items()]  # fmt: skip
    if not marked:
        return None
    words = {word.lower() for word in _WORD.findall(text)}
    named = [item for item in marked if name(item[2]).lower() in words] or marked
    for key, signature, _ in named:
        pages[key] = {**pages[key], "volatile": dict(pages[key]["volatile"]), "recent": []}
        pages[key]["volatile"].pop(signature, None)
    said = "; ".join(f"“{item[2]}”" for item in named)
    return f"I'll report changes to {said} again from the next check on."
