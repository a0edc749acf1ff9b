"""Pages split into passages (paragraphs, list items, table rows) and ranked against a question.

Ranking is BM25 from `bm25s` (maintained, needs only numpy) over Snowball-stemmed words
(`PyStemmer`), each passage scored with its section heading so a row under "Opening hours"
matches "when is it open". Measured on 60 real article pages of tests/corpus/articles (~40
passages each, at most 190): index + query 2.8 ms CPU a page with bm25s (its first import
included), 1.5 ms with `rank-bm25`; bm25s is kept because rank-bm25 has had no release since
2022. Stop words are NLTK's English list as bm25s ships it (`en_plus`, 179 words, question
words included): with bm25s's default 33, "what is on <url>" (a watch's usual question) ranked
every passage on "what" and cost 3.0 ms a real page; now it ranks nothing in 0.14 ms, and
bench/answers.py's hit rate went 75.5 % -> 76.8 % (482 questions, 181 real pages). A question
with no content words ranks nothing: the caller shows the page's lead instead. One index serves a
turn's narrow and wide reading (`scored`, then `best`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, Literal

Kind = Literal["text", "item", "row", "code"]

SENTENCES_PER_PASSAGE = 3  # a long paragraph is ranked in windows of this many sentences
LONG_PARAGRAPH = 400
RELATIVE = 0.4  # a passage scoring under this share of the best one is off the question
MAX_PASSAGES = 3_000  # per turn; a page beyond that is ranked on its first passages

# A heading's text is cut of its closing "#"s with str methods: a lazy "(.*?)\s*#*\s*$" retried
# that tail from every character ("# a" and thousands of "#" or spaces took seconds to minutes).
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_ITEM = re.compile(r"^\s{0,8}(?:[-*+]|\d{1,3}[.)])\s+")
_ROW = re.compile(r"^\s*\|.*\|\s*$")
# Possessive runs: "\s*\|?\s*" could split a run of spaces every way before failing.
_SEPARATOR = re.compile(r"^\s*+\|?\s*+:?-{2,}+:?\s*+(?:\|\s*+:?-{2,}+:?\s*+)*+\|?\s*+$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")
_BOLD_HEADING = re.compile(r"^\*\*([^*]{1,80})\*\*:?$")


@dataclasses.dataclass(frozen=True)
class Passage:
    """One rankable piece of a page; `block` groups the items of one list or rows of one table."""

    url: str
    title: str
    section: str
    kind: Kind
    text: str
    block: int
    order: int
    header: str = ""  # a table row's header and separator lines


def split(markdown: str, *, url: str, title: str = "") -> list[Passage]:
    """The passages of one page's markdown, in page order."""
    out: list[Passage] = []
    section, block, fenced = "", 0, False
    code: list[str] = []
    table: list[str] = []

    def add(kind: Kind, text: str, header: str = "") -> None:
        if text.strip() and len(out) < MAX_PASSAGES:
            out.append(Passage(url, title, section, kind, text.strip(), block, len(out), header))

    def flush_table() -> None:
        nonlocal block
        if not table:
            return
        has_header = len(table) > 1 and _SEPARATOR.match(table[1]) is not None
        header = "\n".join(table[:2]) if has_header else ""
        for row in table[2:] if has_header else table:
            add("row", row, header)
        table.clear()
        block += 1

    for line in markdown.splitlines():
        if _FENCE.match(line):
            if fenced:
                add("code", "\n".join(code))
                code.clear()
                block += 1
            fenced = not fenced
            continue
        if fenced:
            code.append(line)
            continue
        if _ROW.match(line):
            table.append(line)
            continue
        flush_table()
        heading = _heading(line)
        if heading is not None:
            section = heading
            block += 1
        elif not line.strip():
            block += 1
        elif _ITEM.match(line):
            add("item", line.rstrip())
        elif line.lstrip().startswith(">"):
            block += 1
            add("text", line.lstrip().lstrip("> "))
        elif out and out[-1].block == block and out[-1].kind in ("text", "item"):
            last = out.pop()  # a wrapped line continues the paragraph or item above
            out.append(dataclasses.replace(last, text=f"{last.text} {line.strip()}"))
        else:
            add("text", line)
    flush_table()
    if fenced and code:
        add("code", "\n".join(code))
    return _windows(out)


def _heading(line: str) -> str | None:
    """The text of a heading line ("## Hours ##" → "Hours", "**Hours:**" → "Hours:"), else None."""
    found = _HEADING.match(line)
    if found:  # what "\s*#*\s*$" took off the end: spaces, closing "#"s, spaces
        return found.group(1).rstrip().rstrip("#").rstrip()
    bold = _BOLD_HEADING.match(line.strip())
    return bold.group(1).strip() if bold else None


def _windows(found: list[Passage]) -> list[Passage]:
    """Long paragraphs as windows of a few sentences, so a quote stays short and on point."""
    out: list[Passage] = []
    for passage in found:
        if passage.kind != "text" or len(passage.text) <= LONG_PARAGRAPH:
            out.append(dataclasses.replace(passage, order=len(out)))
            continue
        sentences = _SENTENCE_END.split(passage.text)
        for start in range(0, len(sentences), SENTENCES_PER_PASSAGE):
            text = " ".join(sentences[start : start + SENTENCES_PER_PASSAGE])
            out.append(dataclasses.replace(passage, text=text, order=len(out)))
    return out


@functools.cache
def _stemmer() -> Any:
    import Stemmer  # loaded with the first ranking, not with every process

    return Stemmer.Stemmer("english")


def _fold(text: str) -> str:
    """Accents off ("Tiramisù" matches "tiramisu"), ligatures and widths folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _tokenize(texts: list[str]) -> Any:
    import bm25s  # numpy is loaded only when a question is ranked

    folded = [_fold(text) for text in texts]
    return bm25s.tokenize(
        folded, stopwords="en_plus", stemmer=_stemmer().stemWords, show_progress=False
    )


def scored(
    question: str, passages: Sequence[Passage], *, limit: int
) -> list[tuple[Passage, float]]:
    """The `limit` passages that best match `question` with their BM25 scores, best first (none
    when the question has no words to rank by)."""
    query = _tokenize([question])
    if not passages or not (query.ids and query.ids[0]):
        return []
    import bm25s

    corpus = [f"{p.section} {p.text}" for p in passages]
    index = bm25s.BM25()
    index.index(_tokenize(corpus), show_progress=False)
    k = min(limit, len(passages))
    # n_threads=0: retrieved in this thread (1 would start a thread pool on every call).
    found, scores = index.retrieve(query, k=k, show_progress=False, n_threads=0)
    return [(passages[int(i)], float(s)) for i, s in zip(found[0], scores[0], strict=True)]


def best(
    found: Sequence[tuple[Passage, float]], *, limit: int = 8, relative: float = RELATIVE
) -> list[Passage]:
    """Of scored passages, the first `limit` that match a word and score at least `relative`
    times the best one."""
    top = found[0][1] if found else 0.0
    return [p for p, score in found[:limit] if score > 0 and score >= top * relative]


def rank(
    question: str, passages: Sequence[Passage], *, limit: int = 8, relative: float = RELATIVE
) -> list[Passage]:
    """The passages that match `question`, best first (none when nothing matches a word);
    those scoring under `relative` times the best are left out."""
    return best(scored(question, passages, limit=limit), limit=limit, relative=relative)


def group(ranked: Iterable[Passage]) -> list[list[Passage]]:
    """Ranked passages gathered by page section (best section first), page order within each."""
    groups: dict[tuple[str, str], list[Passage]] = {}
    for passage in ranked:
        groups.setdefault((passage.url, passage.section), []).append(passage)
    return [sorted(found, key=lambda p: p.order) for found in groups.values()]


def render(found: list[Passage]) -> str:
    """Passages of one section as markdown, in page order: a table keeps its header, a list stays
    a list, code stays code, text is quoted."""
    pieces: list[str] = []
    previous: Passage | None = None
    for passage in found:
        joined = previous is not None and previous.block == passage.block
        if passage.kind == "row":
            pieces.append(passage.text if joined or not passage.header else
                          f"{passage.header}\n{passage.text}")  # fmt: skip
        elif passage.kind == "item":
            pieces.append(passage.text)
        elif passage.kind == "code":
            pieces.append(f"```\n{passage.text}\n```")
        else:
            pieces.append(f"> {passage.text}")
        if not joined and len(pieces) > 1:
            pieces[-2] += "\n"  # a blank line between two lists, tables or paragraphs
        previous = passage
    return "\n".join(pieces)


def for_model(question: str, markdown: str, *, url: str, limit: int) -> str:
    """A page's markdown for a model within `limit` characters: the passages that best match the
    question first (with their sections), then the page's beginning in what room is left."""
    if len(markdown) <= limit:
        return markdown
    passages = split(markdown, url=url)
    best = rank(question, passages, limit=12)
    out: list[str] = []
    used = 0
    for found in group(best):
        section = f"[{found[0].section}]\n" if found[0].section else ""
        piece = section + render(found)
        if used + len(piece) + 2 > limit * 2 // 3:
            break
        out.append(piece)
        used += len(piece) + 2
    lead_room = limit - used - 80
    if lead_room > 0:
        lead = markdown[:lead_room]
        out.append(("[The page begins]\n" if out else "") + lead)
    cut = len(markdown) - lead_room if lead_room > 0 else len(markdown)
    return "\n\n".join(out) + f"\n… [cut: about {max(cut, 0)} more characters of this page]"
