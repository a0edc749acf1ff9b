"""The diff of two sequences of lines: modified (before → after), added, removed and moved.

difflib.SequenceMatcher aligns the two sequences of line hashes (order matters: a paragraph
moved elsewhere is a move, not nothing); lines removed in one place and added in another are
moves; what is left in each changed stretch is paired by word similarity into modified lines,
and the rest is added or removed. Every change carries a signature that stays the same when the
same line changes the same way again (see agent.volatile).
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections import defaultdict
from collections.abc import Sequence

from lookout.agent import lines, marking

VERSION = 2  # of snapshots: those of earlier versions compared other keys (a first look again)
SIMILAR = 0.4  # word similarity from which a removed + an added line read as one modified line
PAIR_WINDOW = 3  # candidates for pairing: added lines this close to a removed line's place


@dataclasses.dataclass(frozen=True)
class Change:
    kind: str  # "modified", "added", "removed" or "moved"
    before: str | None  # the line as it read (None: added; or not kept, beyond the budget)
    after: str | None  # the line as it reads now (None: removed)
    signature: str


@dataclasses.dataclass(frozen=True)
class Side:
    """One version of a source: a hash per line, and the readable text and key of the lines
    that are known verbatim (None for lines remembered by hash only)."""

    hashes: list[str]
    texts: Sequence[str | None]
    keys: Sequence[str | None]


def side_of(parsed: list[lines.Line], tail: Sequence[str] = ()) -> Side:
    return Side(
        hashes=[line.hash for line in parsed] + list(tail),
        texts=[line.text for line in parsed] + [None] * len(tail),
        keys=[line.key for line in parsed] + [None] * len(tail),
    )


class _Parsed(Sequence[str | None]):
    """The texts or keys of verbatim lines, each line parsed the first time one is read (a diff
    reads those of the changed lines only), then the hash-only lines' None."""

    def __init__(self, raws: list[str], tail: int, cache: dict[int, lines.Line], text: bool):
        self._raws, self._tail, self._cache, self._text = raws, tail, cache, text

    def __len__(self) -> int:
        return len(self._raws) + self._tail

    @typing.overload
    def __getitem__(self, index: int) -> str | None: ...
    @typing.overload
    def __getitem__(self, index: slice) -> Sequence[str | None]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str | None] | None:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index >= len(self._raws):
            if index >= len(self):
                raise IndexError(index)
            return None
        line = self._cache.get(index)
        if line is None:
            parsed = lines.parse(self._raws[index])
            if parsed is None:  # kept lines all parse; never None unless the rules changed
                return None
            line = self._cache[index] = parsed
        return line.text if self._text else line.key


def lazy_side(hashes: list[str], raws: list[str], tail: Sequence[str] = ()) -> Side:
    """A side from remembered hashes: its verbatim lines are parsed only where read."""
    cache: dict[int, lines.Line] = {}
    return Side(
        hashes=hashes + list(tail),
        texts=_Parsed(raws, len(tail), cache, text=True),
        keys=_Parsed(raws, len(tail), cache, text=False),
    )


def diff(old: Side, new: Side) -> list[Change]:
    """The changes from `old` to `new`, in the order a reader meets them."""
    matcher = difflib.SequenceMatcher(None, old.hashes, new.hashes, autojunk=False)
    hunks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    removed = [(h, i) for h, op in enumerate(hunks) for i in range(op[1], op[2])]
    added = [(h, j) for h, op in enumerate(hunks) for j in range(op[3], op[4])]
    moved, removed, added = _moves(old, new, removed, added)
    out: list[Change] = moved
    for h, op in enumerate(hunks):
        gone = [i for hunk, i in removed if hunk == h]
        came = [j for hunk, j in added if hunk == h]
        anchors = (_anchor(new, op[3]), _anchor(old, op[1]))
        out += _hunk(old, new, gone, came, anchors)
    order = {"moved": 3, "modified": 0, "added": 1, "removed": 2}
    return sorted(out, key=lambda change: order[change.kind])


def _moves(
    old: Side, new: Side, removed: list[tuple[int, int]], added: list[tuple[int, int]]
) -> tuple[list[Change], list[tuple[int, int]], list[tuple[int, int]]]:
    """Lines that left one place and arrived at another (by hash), and what is left."""
    leaving: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for item in removed:
        leaving[old.hashes[item[1]]].append(item)
    moved: list[Change] = []
    used: set[tuple[int, int]] = set()
    rest_added = []
    for hunk, j in added:
        candidates = leaving.get(new.hashes[j])
        if candidates:
            item = candidates.pop(0)
            used.add(item)
            before = old.texts[item[1]] or new.texts[j]
            moved.append(Change("moved", before, new.texts[j], "v:" + new.hashes[j]))
        else:
            rest_added.append((hunk, j))
    return moved, [item for item in removed if item not in used], rest_added


def _hunk(
    old: Side, new: Side, gone: list[int], came: list[int], anchors: tuple[str, str]
) -> list[Change]:
    """One changed stretch: removed and added lines paired into modified ones where alike."""
    anchor, old_anchor = anchors
    pairs: dict[int, int] = {}
    if gone and came:
        pairs = _pairs(old, new, gone, came)
    out = []
    for j in came:
        i = next((i for i, paired in pairs.items() if paired == j), None)
        if i is None:
            out.append(Change("added", None, new.texts[j], f"a:{anchor}"))
            continue
        before_key, after_key = old.keys[i], new.keys[j]
        shape = marking.template(before_key or "", after_key or "")
        out.append(Change("modified", old.texts[i], new.texts[j], "m:" + lines.key_hash(shape)))
    out += [
        Change("removed", old.texts[i], None, f"r:{old_anchor}") for i in gone if i not in pairs
    ]
    return out


def _pairs(old: Side, new: Side, gone: list[int], came: list[int]) -> dict[int, int]:
    """old index → new index of the removed and added lines that read as one line edited."""
    if any(old.keys[i] is None for i in gone):  # lines known by hash only: pair by place
        return dict(zip(gone, came, strict=False)) if len(gone) == len(came) else {}
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for pos, i in enumerate(gone):
        near = came[max(0, pos - PAIR_WINDOW) : pos + PAIR_WINDOW + 1]
        scored = [
            (marking.similarity(old.keys[i] or "", new.keys[j] or ""), -abs(came.index(j) - pos), j)
            for j in near
            if j not in taken
        ]
        best = max(scored, default=None)
        if best is not None and best[0] >= SIMILAR:
            pairs[i] = best[2]
            taken.add(best[2])
    return pairs


def _anchor(side: Side, index: int) -> str:
    """What precedes a changed stretch: the hash of the line before it ("^" at the top)."""
    return side.hashes[index - 1] if index > 0 else "^"
