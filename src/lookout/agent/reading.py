"""Extractive answers from read pages (the rule planner's reading): the question's field first,
then the passages that best match it, quoted with their page and section; lists stay lists and
tables stay tables. A question with nothing to rank by gets the page's lead and its sections.

A turn reads a page for a question with `answer_in_reader`: a question to rank by is answered in
one of the process's reader processes (capabilities/readers.py), as its page was read. Ranking is
CPU under the GIL (2.5 ms a real article, bench/answers.py's pages) that would stall the web
process's event loop, and BM25 brings numpy: held by the readers' forkserver, it is not held by
every web and worker process that ran a turn (~12 MiB RSS each; measured from a production
install, `lookout web` after two chat turns on a real article 134.9 -> 122.2 MiB, a worker process
after watch runs 132.4 -> 119.2 MiB, 2026-12-04).
"""

from __future__ import annotations

import functools
import logging
import re
import urllib.parse
from typing import TYPE_CHECKING, Any

from lookout.agent import fields, passages
from lookout.capabilities import readers

if TYPE_CHECKING:
    from lookout.settings import Settings

logger = logging.getLogger(__name__)

MAX_GROUPS = 4  # quoted lists / tables / paragraphs per answer
MAX_CHARS = 1_800  # an answer's quotes stop growing past this
LEAD_CHARS = 600
MAX_SECTIONS = 8
WIDE = 30  # passages a field's value is looked for in, best first
MAX_ITEMS = 15  # of one list or table shown as the page's lead
_URL = re.compile(r"https?://\S+")
_GENERIC = re.compile(
    r"\b(summari[sz]e|summary|overview|tl;?dr|what is (on|in) (it|this|that|the page)|"
    r"what does (it|the page) say|read (it|this|the page)|gist)\b"
)


def host(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or url


def link(page: dict[str, Any]) -> str:
    title = (page.get("title") or host(page["url"])).replace("[", "(").replace("]", ")")
    return f"[{title}]({page.get('final_url') or page['url']})"


def question_of(text: str) -> str:
    """The question without its URLs."""
    return _URL.sub(" ", text).strip()


def generic(question: str) -> bool:
    """True when `question` asks for the page as a whole (nothing to rank by)."""
    return _GENERIC.search(question_of(question).lower()) is not None


async def answer_in_reader(question: str, page: dict[str, Any], settings: Settings) -> str:
    """`answer`, ranked in a reader process; a question asking for the whole page, which ranks
    nothing, is answered here. A reader that times out or dies answers with the page's lead."""
    if generic(question):
        return answer(question, page)
    try:
        return await readers.of(settings).run(functools.partial(answer, question, page))
    except (readers.ReadTimeout, readers.ReadCrashed) as exc:
        logger.warning("ranking %s for a question failed (%s): its lead instead", page["url"], exc)
        return lead(page)


def answer(question: str, page: dict[str, Any]) -> str:
    """One page read for `question`, as markdown."""
    markdown = page.get("markdown") or ""
    every = passages.split(markdown, url=page["url"], title=page.get("title") or "")
    asked = question_of(question)
    scored = [] if generic(question) else passages.scored(asked, every, limit=WIDE)
    ranked = passages.best(scored)
    wide = passages.best(scored, limit=WIDE, relative=0.0)
    field = fields.find(asked, page, wide, every)
    if not ranked and field is None:
        return lead(page, every)
    out = [_field_line(field, page)] if field else []
    out += _quotes(ranked, skip=field.passage if field else None)
    out.append(f"Source: {link(page)}")
    return "\n\n".join(out)


def _field_line(found: fields.Found, page: dict[str, Any]) -> str:
    name = found.field[0].upper() + found.field[1:]
    if found.passage is None:
        return f"**{name}:** {found.value} ({found.source})"
    section = f" — *{found.passage.section}*" if found.passage.section else ""
    group = list(_block_of(found.passage, page))
    # Hours are a list of days: the list says it better than its first value.
    value = "" if found.field == "opening hours" and len(group) > 1 else f" {found.value}"
    return f"**{name}:**{value}{section}\n" + passages.render(group)


def _block_of(found: passages.Passage, page: dict[str, Any]) -> list[passages.Passage]:
    """The passage with the rest of its list or table when that is short (opening hours)."""
    if found.kind not in ("item", "row"):
        return [found]
    every = passages.split(page.get("markdown") or "", url=page["url"])
    block = [p for p in every if p.block == found.block]
    return block if len(block) <= 10 else [found]


def _quotes(ranked: list[passages.Passage], *, skip: passages.Passage | None) -> list[str]:
    out: list[str] = []
    used = 0
    kept = [p for p in ranked if skip is None or (p.block != skip.block and p.order != skip.order)]
    for found in passages.group(kept):
        if len(out) >= MAX_GROUPS or used > MAX_CHARS:
            break
        body = passages.render(found)
        section = found[0].section
        out.append(f"**{section}**\n{body}" if section else body)
        used += len(body)
    return out


def lead(page: dict[str, Any], every: list[passages.Passage] | None = None) -> str:
    """The page's title, first paragraphs and sections: what it is about."""
    markdown = page.get("markdown") or ""
    every = every if every is not None else passages.split(markdown, url=page["url"])
    out = [f"**{page.get('title') or host(page['url'])}** ({page.get('final_url') or page['url']})"]
    text, used = [], 0
    for passage in every:
        if passage.kind != "text" or used > LEAD_CHARS:
            continue
        text.append(passage.text)
        used += len(passage.text)
    title = page.get("title") or ""
    sections = list(dict.fromkeys(p.section for p in every if p.section and p.section != title))
    if text:
        out.append("\n\n".join(text[:2]))
    if sections:
        out.append("Sections:\n" + "\n".join(f"- {s}" for s in sections[:MAX_SECTIONS]))
    if len(text) > 2:
        out.append("\n\n".join(text[2:]))
    if used < LEAD_CHARS:  # little prose: the page's first lists and tables say what it is
        out += _first_blocks([p for p in every if p.kind != "text"], LEAD_CHARS - used)
    if len(out) == 1:
        out.append("The page has no readable text.")
    return "\n\n".join(out)


def _first_blocks(found: list[passages.Passage], room: int) -> list[str]:
    """The page's first lists / tables / code, whole, within `room` characters."""
    out: list[str] = []
    blocks: dict[int, list[passages.Passage]] = {}
    for passage in found:
        blocks.setdefault(passage.block, []).append(passage)
    for block in blocks.values():
        body = passages.render(block[:MAX_ITEMS])
        if out and len(body) > room:
            break
        out.append(body)
        room -= len(body)
        if room <= 0:
            break
    return out
