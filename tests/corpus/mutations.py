"""A mutation corpus from the real article pages in tests/corpus/articles/: each page's HTML with
one realistic edit inside its main content (which must be reported), or one kind of noise in its
markup or outside the article (which must not).

The ground truth's article text says where the content is: an edit goes into a text node of the
page whose words are in the article body. Besides the page's own sentences, numbers, names and
paragraphs, every page gets a short block of typical watched lines (a price, seats left, an
opening time, a deadline, a release, a price list, a ranked list, a table, an "updated … ago"
line) inside its article, in both versions; edits change one value of it.

Used by tests/unit/test_changes_corpus.py, tests/unit/test_changes_properties.py, the
integration test through a worker, and bench/versus.py (the same edits and noise for both tools).
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import html
import html.parser
import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "articles"
FIXTURE = (
    "<p>Rooms from 149 € per night.</p><p>Only 3 seats left.</p>"
    "<p>Doors open at 09:00.</p><p>Deadline: March 3, 2025.</p>"
    "<p>Current release: 3.12.10</p>"
    "<ul><li>149 € — double room</li><li>99 € — single room</li></ul>"
    "<ol><li>Lisbon</li><li>Porto</li><li>Braga</li></ol>"
    "<table><tr><th>Ticket</th><th>Price</th></tr><tr><td>Adults</td><td>12 €</td></tr></table>"
    "<p>Updated 5 minutes ago</p>"
)
_SKIP_TAGS = {"script", "style", "head", "noscript", "template", "title", "textarea", "svg"}
_WORD = re.compile(r"(?<![\w@/.-])[a-z]{5,12}(?![\w@/.-])")
_NAME = re.compile(r"(?<=[a-z,] )[A-Z][a-z]{3,11}(?![\w'\u2019-])")
_NUMBER = re.compile(r"(?<![\w.,:/-])\d{1,4}(?![\w:/]|[.,]\d)")
_MONTH_DAY = re.compile(r"\b(January|February|March|April|May|June|July|August|September"
                        r"|October|November|December) (\d{1,2})\b")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Case:
    page: str
    kind: str
    edit: bool  # an edit to report (True) or noise to ignore (False)
    before: str
    after: str
    expect: str = ""  # for an edit: text its report's data must hold (the line as it is now)
    value: str = ""  # for an edit: the new value its report's words must show
    other: str = ""  # or this, for both (two paragraphs swapped: either one moved)


@dataclasses.dataclass(frozen=True)
class Segment:
    start: int
    end: int
    text: str


def page_ids() -> list[str]:
    return sorted(truth())


@functools.cache
def truth() -> dict[str, dict[str, str]]:
    with gzip.open(ROOT / "ground-truth.json.gz") as raw:
        found: dict[str, dict[str, str]] = json.load(raw)
    return found


@functools.cache
def page_html(page: str) -> str:
    with gzip.open(ROOT / "html" / f"{page}.html.gz") as raw:
        return raw.read().decode("utf-8", errors="replace")


class _Texts(html.parser.HTMLParser):
    """Text nodes with their offsets in the source, outside scripts, styles and the head."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=False)
        self.starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.skipping: list[str] = []
        self.found: list[Segment] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in _SKIP_TAGS:
            self.skipping.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data: str) -> None:
        if not self.skipping and data.strip():
            line, col = self.getpos()
            start = self.starts[line - 1] + col
            self.found.append(Segment(start, start + len(data), data))


@functools.cache
def content(page: str) -> tuple[Segment, ...]:
    """The page's text nodes whose words are in its article body (at least 6 words running)."""
    source = page_html(page)
    body = " ".join(truth()[page]["articleBody"].split())
    parser = _Texts(source)
    try:
        parser.feed(source)
    except (AssertionError, ValueError):
        return ()
    out = []
    for segment in parser.found:
        words = segment.text.split()
        if len(words) >= 6 and " ".join(words[:6]) in body and "&" not in segment.text:
            out.append(segment)
    return tuple(out)


def _replace(source: str, start: int, end: int, new: str) -> str:
    return source[:start] + new + source[end:]


def _fixture_place(page: str) -> int:
    """Where the block goes: after the page's first content paragraph (-1: none found)."""
    source = page_html(page)
    for segment in content(page):
        span = _paragraph(source, segment)
        if span is not None:
            return span[1]
    return -1


def with_fixture(page: str) -> str | None:
    """The page with the block of typical watched lines after its first content paragraph
    (None: no content paragraph found)."""
    at = _fixture_place(page)
    return None if at < 0 else _replace(page_html(page), at, at, FIXTURE)


def _paragraph(source: str, segment: Segment) -> tuple[int, int] | None:
    """The <p>…</p> around a text node, if it is in one (with no other paragraph inside)."""
    start = source.rfind("<p", 0, segment.start)
    end = source.find("</p>", segment.end)
    if start < 0 or end < 0 or source[start + 2 : start + 3] not in (">", " "):
        return None
    inner = source[start + 3 : end]
    if "<p" in inner or "</div" in inner or end - start > 5000:
        return None
    return start, end + 4


def content_of(base: str, page: str) -> list[Segment]:
    """The page's content text nodes where they are in `base` (the page with the fixture)."""
    at, size = _fixture_place(page), len(FIXTURE)
    shifted = [Segment(s.start + size, s.end + size, s.text) if s.start >= at else s
               for s in content(page)]  # fmt: skip
    return [s for s in shifted if base[s.start : s.end] == s.text]


def edits(page: str, base: str) -> Iterator[Case]:
    """Every edit kind that this page allows, applied to `base` (the page with the fixture)."""
    fixture_at = base.find(FIXTURE)
    for kind, old, new, expect, value in (
        ("price", "149 € per", "129 € per", "Rooms from 129 € per night.", "129"),
        ("count", "3 seats", "2 seats", "Only 2 seats left.", "2"),
        ("time", "09:00", "10:30", "Doors open at 10:30.", "10:30"),
        ("date", "March 3,", "March 17,", "Deadline: March 17, 2025.", "17"),
        ("version", "3.12.10", "3.12.11", "Current release: 3.12.11", "3.12.11"),
        ("list_item", "149 € — double", "119 € — double", "119 € — double room", "119"),
        ("table_cell", "12 €", "14 €", "Adults | 14 €", "14"),
    ):  # fmt: skip
        at = base.find(old, fixture_at)
        after = _replace(base, at, at + len(old), new)
        yield Case(page, kind, True, base, after, expect, value)
    ranked = "<ol><li>Lisbon</li><li>Porto</li><li>Braga</li></ol>"
    reordered = "<ol><li>Braga</li><li>Lisbon</li><li>Porto</li></ol>"
    after = base.replace(ranked, reordered)
    yield Case(page, "ranked_reorder", True, base, after, "1. Braga", "Braga")
    segments = content_of(base, page)
    yield from _text_edits(page, base, segments)
    yield from _paragraph_edits(page, base, segments)


def _text_edits(page: str, base: str, segments: list[Segment]) -> Iterator[Case]:
    def first(
        pattern: re.Pattern[str], pool: list[Segment]
    ) -> tuple[Segment, re.Match[str]] | None:
        for segment in pool:
            if found := pattern.search(segment.text):
                return segment, found
        return None

    middle = segments[len(segments) // 3 :] + segments[: len(segments) // 3]
    for kind, pattern, pool, make in (
        ("word", _WORD, middle, lambda m: "zanzibar" if m.group(0) != "zanzibar" else "quokka"),
        ("name", _NAME, middle, lambda m: "Okonkwo"),
        ("number", _NUMBER, middle, lambda m: str(int(m.group(0)) + 7)),
        ("deep_word", _WORD, segments[::-1], lambda m: "quokka"),
    ):  # fmt: skip
        hit = first(pattern, pool)
        if hit is not None:
            segment, found = hit
            at = segment.start + found.start()
            new = make(found)
            after = _replace(base, at, segment.start + found.end(), new)
            yield Case(page, kind, True, base, after, new, new)
    hit = first(_MONTH_DAY, middle)
    if hit is not None:
        segment, found = hit
        day = int(found.group(2)) % 28 + 1
        at = segment.start + found.start(2)
        after = _replace(base, at, segment.start + found.end(2), str(day))
        yield Case(page, "real_date", True, base, after, f"{found.group(1)} {day}", str(day))


def _paragraph_edits(page: str, base: str, segments: list[Segment]) -> Iterator[Case]:
    spans = [(s, p) for s in segments[1:] if (p := _paragraph(base, s)) is not None
             and re.fullmatch(r"<p\b[^>]*>\s*", base[p[0] : s.start])]  # fmt: skip
    if not spans:
        return
    segment, (start, end) = spans[len(spans) // 2]
    added = "<p>A correction was appended to this article on Tuesday by the editors.</p>"
    said = "A correction was appended"
    yield Case(page, "paragraph_added", True, base, _replace(base, end, end, added), said, said)
    words = " ".join(segment.text.split()[:6])
    gone = _replace(base, start, end, "")
    yield Case(page, "paragraph_removed", True, base, gone, words, words)
    for segment, (start, end) in spans:  # a paragraph and the one right after it, swapped
        o_start = base.find("<p", end)
        o_end = base.find("</p>", o_start) + 4
        if o_start < 0 or base[end:o_start].strip() or "<p" in base[o_start + 2 : o_end - 4]:
            continue
        if not re.match(r"<p[\s>]", base[o_start:]) or o_end - o_start > 5000:
            continue
        swapped = base[:start] + base[o_start:o_end] + base[end:o_start] + base[start:end]
        swapped += base[o_end:]
        words = " ".join(segment.text.split()[:6])
        opening = re.sub(r"<[^>]+>", " ", base[o_start:o_end])
        other = " ".join(html.unescape(opening).split()[:4])
        if len(other.split()) < 4:  # an image, a blank: nothing a report could name it by
            continue
        yield Case(page, "paragraphs_swapped", True, base, swapped, words, words, other)
        return


NoiseKind = Callable[[str, random.Random], str]


def _attributes(source: str, rng: random.Random) -> str:
    token = f"{rng.getrandbits(32):08x}"
    source = re.sub(r'\bclass="', f'class="c-{token} ', source)
    source = re.sub(r'\bid="([^"]*)"', rf'id="\1-{token}"', source)
    return re.sub(r"<(p|div|span|li)\b", rf'<\1 data-rev="{token}"', source)


def _scripts_styles(source: str, rng: random.Random) -> str:
    stamp = rng.randrange(1_700_000_000, 1_800_000_000)
    script = f"<script>window.__state={{t:{stamp},n:'{rng.getrandbits(40):x}'}};</script>"
    style = f"<style>.x{rng.getrandbits(16)}{{color:#{rng.getrandbits(24):06x}}}</style>"
    return source.replace("</body>", script + style + "</body>", 1).replace(
        "<p>Rooms", f"{script}<noscript>Enable JS {stamp}</noscript><p>Rooms", 1)  # fmt: skip


def _hidden_tokens(source: str, rng: random.Random) -> str:
    token = f"{rng.getrandbits(64):016x}"
    hidden = f'<input type="hidden" name="csrf" value="{token}"><span hidden>{token}</span>'
    hidden += f'<span aria-hidden="true">{token[:6]}</span>'
    source = source.replace("</head>", f'<meta name="csrf-token" content="{token}"></head>', 1)
    return source.replace("<p>Only 3", f"{hidden}<p>Only 3", 1)


def _tracking(source: str, rng: random.Random) -> str:
    params = f"utm_source=news{rng.randrange(99)}&utm_medium=email"
    params += f"&fbclid=IwAR{rng.getrandbits(40):x}&gclid=Cj{rng.getrandbits(30):x}"
    params += f"&mc_cid={rng.getrandbits(24):x}&mc_eid=abc"

    def tag(match: re.Match[str]) -> str:
        url = match.group(2)
        return f'{match.group(1)}"{url}{"&" if "?" in url else "?"}{params}"'

    return re.sub(r'(<a\b[^>]*?\bhref=)"(https?://[^"#]*)"', tag, source)


def _sessions_busters(source: str, rng: random.Random) -> str:
    session = f"{rng.getrandbits(64):X}"
    buster = str(rng.randrange(1_700_000_000, 1_800_000_000))
    source = re.sub(r'(<a\b[^>]*?\bhref="https?://[^"?#]*)"', rf'\1;jsessionid={session}"', source)
    return re.sub(r'(<img\b[^>]*?\bsrc="[^"?#]*)"', rf'\1?_={buster}"', source)


def _relative_time(source: str, rng: random.Random) -> str:
    said = rng.choice(["just now", "12 minutes ago", "an hour ago", "2 hours ago", "moments ago"])
    return source.replace("Updated 5 minutes ago", f"Updated {said}", 1)


def _whitespace(source: str, rng: random.Random) -> str:
    source = re.sub(r">([ \t\r\n]+)<", lambda m: ">\n" + " " * rng.randrange(1, 8) + "<", source)
    return source.replace("Rooms from 149", "Rooms   from\n 149", 1)


def _markup(source: str, rng: random.Random) -> str:
    source = source.replace("Only 3 seats left.", "Only <b>3</b> seats <span class=x>left</span>.")
    # Both halves or neither (the <p> may carry attributes by now): a lone </div> would close
    # the article's container early, which is a change of the page's structure, not markup.
    wrapped = r'<div class="wrap">\1<em>09:00</em>.</p></div>'
    return re.sub(r"(<p\b[^>]*>Doors open at )09:00\.</p>", wrapped, source, count=1)


def _chrome(source: str, rng: random.Random) -> str:
    """Outside the article: a header clock, a trending list, a cookie bar, an ad (realistic
    wrappers, as sites mark them: this leans on extraction leaving them out)."""
    hour, minute = rng.randrange(24), rng.randrange(60)
    trending = "".join(f"<li><a href='/t/{rng.randrange(999)}'>Story {rng.randrange(999)}</a></li>"
                       for _ in range(5))  # fmt: skip
    chrome = (f"<header><time>{hour:02d}:{minute:02d}</time></header>"
              f"<aside class='trending'><h3>Trending</h3><ul>{trending}</ul></aside>"
              f"<div class='cookie-consent'>We use cookies ({rng.randrange(9)} partners)</div>"
              f"<div class='advert'>Ad: {rng.choice(['Shoes', 'Cars', 'Phones'])} "
              f"-{rng.randrange(90)}%</div>")  # fmt: skip
    return re.sub(r"(<body\b[^>]*>)", lambda m: m.group(1) + chrome, source, count=1)


NOISE: dict[str, NoiseKind] = {
    "attributes": _attributes, "scripts_styles": _scripts_styles, "hidden_tokens": _hidden_tokens,
    "tracking_params": _tracking, "sessions_cache_busters": _sessions_busters,
    "relative_time": _relative_time, "whitespace": _whitespace, "markup_only": _markup,
    "outside_chrome": _chrome,
}  # fmt: skip
# Noise kinds whose "before" carries the same kind with other values (a clock, a token).
BOTH_SIDES = {"attributes", "scripts_styles", "hidden_tokens", "outside_chrome", "tracking_params",
               "sessions_cache_busters"}  # fmt: skip


def noise(page: str, base: str) -> Iterator[Case]:
    for kind, make in NOISE.items():
        rng = random.Random(f"{page}:{kind}")
        before = make(base, random.Random(f"{page}:{kind}:0")) if kind in BOTH_SIDES else base
        yield Case(page, kind, False, before, make(base, rng))


def cases(pages: list[str]) -> Iterator[Case]:
    for page in pages:
        base = with_fixture(page)
        if base is not None:
            yield from edits(page, base)
            yield from noise(page, base)
