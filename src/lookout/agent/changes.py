"""What changed on a watched source between two looks: pure, from snapshots in the thread state.

A page's snapshot is its markdown lines (agent.lines says what of a line is compared), kept
verbatim up to KEPT_BYTES and, past that, as an 8-byte hash per line for MAX_HASHED more lines:
a whole page of web.scrape's (100,000 characters by default) is compared, not its first
screens; what is kept is bounded in bytes. The diff (agent.diffing) reports every
edit of the content: modified lines as before → after with the changed words marked, added,
removed and moved lines. Search, site and maps results are compared item by item
(agent.results). Lines that change on every check while nothing else does are left out once
noticed (agent.volatile).

Each line is normalized once, when its page is read: a snapshot keeps the hashes of its verbatim
lines too ("kept", 16 hex characters a line), so the next look compares hashes and parses again
only the prior lines a change shows (was: every prior line parsed again on every changed look).
What a line's key is (agent.lines) is thus remembered: changing it needs a new VERSION, as it
always did for the lines remembered by hash only.

What a watch relies on from extraction (capabilities/extract.py): that web.scrape's markdown
holds the main content and not the page's chrome. A sidebar, clock or ad that the extractor
keeps is content here (until volatile marking notices a line changing on every check).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Any

from lookout.agent import diffing, lines, marking, results, volatile

VERSION = diffing.VERSION
# Per page at most ~93 KB (the 300 lines x 300 characters kept before were 90 KB): 48 KB of
# verbatim markdown, then a 16-hex hash per line (~18 bytes in the checkpoint) for 2,500 more
# lines — past web.scrape's default 100,000 characters on any page of paragraphs. Each of a
# chat's MAX_SOURCES snapshots is bounded so: ~1.9 MB a watch at most, as before.
KEPT_BYTES = 48_000
MAX_HASHED = 2_500
MAX_SOURCES = 20  # snapshots per chat, oldest dropped
SHOWN = 8  # lines of each kind said in a chat answer or a notification
DATA_ITEMS = 20  # lines of each kind kept as data on a run, a part or a webhook payload
KINDS = ("modified", "added", "removed", "moved")
_RANK = re.compile(r"^\d{1,9}\. ")
_SNAPSHOT = ("v", "kind", "lines", "kept", "hashes", "digest", "source")
_HASH_CHARS = 16  # lines.key_hash: 8 bytes in hex


@dataclasses.dataclass(frozen=True)
class Looked:
    """A comparison with the chat's previous snapshot of a source."""

    key: str
    title: str
    since: str
    changes: list[diffing.Change]
    before: str  # digests of the two versions (flap suppression compares them)
    after: str
    note: str = ""  # said once: lines newly found to change on every check

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def page_entry(markdown: str, prior: dict[str, Any] | None = None) -> dict[str, Any]:
    """A page's snapshot; the prior one's lines when the markdown is byte for byte the same.
    It holds the page's every line under "_now" until `track` compares and drops it."""
    source = hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:32]
    if prior is not None and prior.get("source") == source and prior.get("v") == VERSION:
        return {key: prior[key] for key in _SNAPSHOT if key in prior}
    parsed = [line for raw in lines.split(markdown) if (line := lines.parse(raw)) is not None]
    kept: list[str] = []
    size = 0
    for line in parsed:
        size += len(line.raw.encode("utf-8")) + 1
        if size > KEPT_BYTES:
            break
        kept.append(line.raw)
    now = diffing.side_of(parsed[: len(kept) + MAX_HASHED])
    entry = {
        "v": VERSION, "kind": "page", "lines": kept, "kept": "".join(now.hashes[: len(kept)]),
        "hashes": now.hashes[len(kept) :], "source": source, "digest": _digest(now.hashes),
    }  # fmt: skip
    entry["_now"] = now
    return entry


def _side(entry: dict[str, Any]) -> diffing.Side:
    now = entry.get("_now")
    if isinstance(now, diffing.Side):
        return now
    raws, tail = list(entry["lines"]), list(entry.get("hashes") or [])
    kept = str(entry.get("kept") or "")
    if len(kept) != _HASH_CHARS * len(raws):  # a snapshot from before "kept": parse its lines
        return diffing.side_of(lines.parse_all(raws), tail)
    hashes = [kept[i : i + _HASH_CHARS] for i in range(0, len(kept), _HASH_CHARS)]
    return diffing.lazy_side(hashes, raws, tail)


def _digest(hashes: list[str]) -> str:
    return hashlib.sha256("\n".join(hashes).encode("utf-8")).hexdigest()[:32]


def compare(prior: dict[str, Any], entry: dict[str, Any]) -> list[diffing.Change]:
    """Every change from `prior` to `entry` (two snapshots of the same source)."""
    if prior.get("digest") == entry.get("digest"):
        return []
    if entry.get("kind") == "items":
        return results.compare(prior, entry)
    return diffing.diff(_side(prior), _side(entry))


def comparable(prior: dict[str, Any] | None, entry: dict[str, Any]) -> bool:
    return prior is not None and prior.get("v") == VERSION and prior.get("kind") == entry["kind"]


def track(
    pages: dict[str, Any], key: str, entry: dict[str, Any], *, at: str, title: str,
    scheduled: bool,
) -> Looked | None:  # fmt: skip
    """Compare `entry` with the chat's last snapshot under `key`, then keep it; None on a
    first look (or a snapshot of an earlier version, taken as one)."""
    prior = pages.get(key)
    kept = volatile.carried(prior)
    now = entry.pop("_now", None)
    if not comparable(prior, entry):
        remember(pages, key, {**entry, **kept, "at": at, "title": title})
        return None
    assert prior is not None
    found = compare(prior, {**entry, "_now": now} if now is not None else entry)
    shown, kept, note = volatile.observe(found, kept, scheduled=scheduled)
    remember(pages, key, {**entry, **kept, "at": at, "title": title})
    return Looked(
        key, title, str(prior.get("at") or ""), shown, str(prior["digest"]), entry["digest"],
        note,
    )  # fmt: skip


def remember(pages: dict[str, Any], key: str, entry: dict[str, Any]) -> None:
    """Keep the latest snapshot under `key`, at most MAX_SOURCES per chat (oldest dropped)."""
    pages.pop(key, None)
    pages[key] = entry
    while len(pages) > MAX_SOURCES:
        pages.pop(next(iter(pages)))


def of_kind(changes: list[diffing.Change], kind: str) -> list[diffing.Change]:
    return [change for change in changes if change.kind == kind]


def describe(looked: Looked) -> str:
    """Plain words: modified lines with the changed words marked, then added, removed and
    moved lines, each bounded; or no change since the last look."""
    if not looked.changed:
        out = [f"No change since {looked.since}."]
    else:
        out = [f"Changed since {looked.since}:"]
        for kind in KINDS:
            out += _said(kind, of_kind(looked.changes, kind))
    if looked.note:
        out.append(looked.note)
    return "\n".join(out)


def _said(kind: str, found: list[diffing.Change]) -> list[str]:
    if not found:
        return []
    shown = [f"  {_line(change)}" for change in found[:SHOWN]]
    more = len(found) - SHOWN
    return [f"{kind.capitalize()} ({len(found)}):", *shown] + (
        [f"  … and {more} more"] if more > 0 else []
    )


def _line(change: diffing.Change) -> str:
    return said(change.kind, change.before, change.after)


def said(kind: str, before: str | None, after: str | None) -> str:
    """One change in words (also used on data read back: notification texts)."""
    if kind == "modified":
        if before is None:
            return f"~ {marking.marked('', after or '')} (the earlier text was not kept)"
        rest_before, rest_after, fields = results.fields_changed(before, after or "")
        if not fields:
            return f"~ {marking.marked(before, after or '')}"
        name = rest_after.split(" — ")[0]  # a place's line starts with its name
        if rest_before == rest_after:
            return f"~ {marking.clip(name)}: {'; '.join(fields)}"
        return f"~ {marking.marked(rest_before, rest_after)}; {'; '.join(fields)}"
    if kind == "added":
        return f"+ {marking.clip(after or '')}"
    if kind == "removed":
        return f"- {marking.clip(before or '')}"
    moved = marking.clip(after or "")
    if before == after or before is None:
        return f"↕ {moved}"
    old, new = _RANK.match(before), _RANK.match(moved)
    if old and new and before[old.end() :] == moved[new.end() :]:  # a ranked item: 3. → 1.
        return f"↕ {moved[new.end() :]} ({old.group(0).strip()} → {new.group(0).strip()})"
    return f"↕ {moved} (was {marking.clip(before)})"


def data(looked: Looked) -> dict[str, Any]:
    """The comparison as data: {changed, modified: [{before, after}], added, removed, moved,
    counts}, each list bounded to DATA_ITEMS (counts are exact), with the source's url,
    title, since and the two versions' digests."""
    out: dict[str, Any] = {"url": looked.key, "title": looked.title, "since": looked.since}
    out.update(lists(looked.changes))
    out.update(before=looked.before, after=looked.after)
    # As before this diff had modified lines and moves (notify.message, notify.versions).
    out.update(added_count=out["counts"]["added"], removed_count=out["counts"]["removed"])
    return out


def lists(found: list[diffing.Change]) -> dict[str, Any]:
    out: dict[str, Any] = {"changed": bool(found)}
    for kind in KINDS:
        of = of_kind(found, kind)[:DATA_ITEMS]
        if kind in ("modified", "moved"):
            out[kind] = [_pair(change) for change in of]
        else:
            texts = [change.after if kind == "added" else change.before for change in of]
            out[kind] = [marking.clip(text or "") for text in texts]
    out["counts"] = {kind: len(of_kind(found, kind)) for kind in KINDS}
    return out


def _pair(change: diffing.Change) -> dict[str, str | None]:
    if change.before is None:
        return {"before": None, "after": marking.excerpts("", change.after or "")[1]}
    before, after = marking.excerpts(change.before, change.after or "")
    return {"before": before, "after": after}


def run_data(sources: list[dict[str, Any]]) -> dict[str, Any]:
    """What a run found over all its sources: {changed, modified, added, removed, moved,
    counts} merged (bounded) and `sources`, each source's own."""
    out: dict[str, Any] = {"changed": any(source["changed"] for source in sources)}
    for kind in KINDS:
        out[kind] = [item for source in sources for item in source[kind]][:DATA_ITEMS]
    out["counts"] = {kind: sum(s["counts"][kind] for s in sources) for kind in KINDS}
    keep = ("url", "title", "since", "changed", *KINDS, "counts")
    out["sources"] = [{key: source[key] for key in keep} for source in trimmed(sources)]
    return out


def trimmed(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each source's data with its lists cut to a share of DATA_ITEMS: a watch of 20 pages
    keeps what one page would (counts stay exact)."""
    share = max(2, DATA_ITEMS // max(1, len(sources)))
    return [{**source, **{kind: source[kind][:share] for kind in KINDS}} for source in sources]
