"""What changed on a page between two turns: pure, from snapshots kept in the thread state.

A snapshot is the page's meaningful lines, normalized so that whitespace, markup order,
timestamps and dates alone never read as a change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterable
from typing import Any

MAX_LINES = 300
MAX_LINE_CHARS = 300
SHOWN = 8

_WS = re.compile(r"\s+")
_DIGIT = re.compile(r"\d")
_MARKUP = re.compile(r"^[#>*\-+\d.\s|]+|[*_`|]+")
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?\b", re.IGNORECASE)
_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}(?:t[\d:.]+z?)?|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|"
    r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+\d{1,2}\s+[a-z]{3,9}\.?\s+\d{4}|"
    r"[a-z]{3,9}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[a-z]{3,9}\.?\s+\d{4})\b",
    re.IGNORECASE,
)
_RELATIVE = re.compile(r"\b\d+\s+(?:second|minute|hour|day)s?\s+ago\b", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Diff:
    added: list[str]
    removed: list[str]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)


def normalize(line: str) -> str:
    """The part of a line that matters: no markup, no clock or calendar, single spaces."""
    line = _MARKUP.sub(" ", line)
    if _DIGIT.search(line):  # every clock, date and "n days ago" has a digit; most lines none
        line = _RELATIVE.sub("<ago>", _DATE.sub("<date>", _TIME.sub("<time>", line)))
    return _WS.sub(" ", line).strip().lower()


def snapshot(markdown: str) -> list[str]:
    """The page's meaningful lines (verbatim, bounded), in order, without duplicates."""
    return capture(markdown)[0]


def capture(markdown: str) -> tuple[list[str], str]:
    """`snapshot(markdown)` and its `digest`, normalizing each line once."""
    seen: set[str] = set()
    lines: list[str] = []
    keys: list[str] = []
    for raw in markdown.splitlines():
        line = _WS.sub(" ", raw).strip()
        key = normalize(line)
        if len(key) < 3 or key in seen:
            continue
        seen.add(key)
        kept = line[:MAX_LINE_CHARS]
        lines.append(kept)
        keys.append(key if len(line) <= MAX_LINE_CHARS else normalize(kept))
        if len(lines) >= MAX_LINES:
            break
    return lines, _digest_keys(keys)


def observe(markdown: str, prior: dict[str, Any] | None) -> tuple[list[str], str, str]:
    """(lines, digest, source hash) of a page's new markdown; taken from `prior` (the page as
    last remembered) when the markdown is byte for byte what it was then, as it mostly is."""
    source = hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:32]
    if prior is not None and prior.get("source") == source:
        return list(prior["lines"]), page_digest(prior), source
    lines, version = capture(markdown)
    return lines, version, source


def digest(lines: Iterable[str]) -> str:
    """A version of a snapshot, blind to order and time like `diff`: equal digests, no change."""
    return _digest_keys(normalize(line) for line in lines)


def _digest_keys(keys: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(keys))).encode("utf-8")).hexdigest()[:32]


def page_digest(page: dict[str, Any]) -> str:
    """The digest a remembered page carries (computed for one remembered before digests were)."""
    kept = page.get("digest")
    return kept if isinstance(kept, str) else digest(page["lines"])


def diff(before: list[str], after: list[str]) -> Diff:
    """Lines added and removed (verbatim), ignoring order and time-only edits."""
    old_keys = [normalize(line) for line in before]
    new_keys = [normalize(line) for line in after]
    old, new = set(old_keys), set(new_keys)
    return Diff(
        added=[line for line, key in zip(after, new_keys, strict=True) if key not in old],
        removed=[line for line, key in zip(before, old_keys, strict=True) if key not in new],
    )


def describe(diff: Diff, since: str) -> str:
    """Plain words for a diff: what was added and removed, or no change since `since`."""
    if not diff.changed:
        return f"No change since {since}."
    out = [f"Changed since {since}:"]
    out += _listed("Added", diff.added) + _listed("Removed", diff.removed)
    return "\n".join(out)


def _listed(label: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    shown = [f"  + {line}" if label == "Added" else f"  - {line}" for line in lines[:SHOWN]]
    more = len(lines) - SHOWN
    return [f"{label} ({len(lines)}):", *shown] + ([f"  … and {more} more"] if more > 0 else [])


def remember(
    pages: dict[str, Any],
    url: str,
    at: str,
    title: str,
    lines: list[str],
    version: str,
    source: str | None = None,
) -> None:
    """Keep the latest snapshot of `url`, its digest and the hash of the markdown it came from,
    at most 20 pages per chat (oldest dropped)."""
    pages.pop(url, None)
    pages[url] = {"at": at, "title": title, "lines": lines, "digest": version}
    if source is not None:
        pages[url]["source"] = source
    while len(pages) > 20:
        pages.pop(next(iter(pages)))
