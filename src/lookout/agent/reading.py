"""Extractive answers from read pages (the rule planner's reading): the question's field first,
then the passages that best match it, quoted with their page and section; lists stay lists and
tables stay tables. A question with nothing to rank by gets the page's lead and its sections."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from lookout.agent import fields, passages

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


def answer(question: str, page: dict[str, Any]) -> str:
    """One page read for `question`, as markdown."""
    markdown = page.get("markdown") or ""
    every = passages.split(markdown, url=page["url"], title=page.get("title") or "")
    asked = question_of(question)
    generic = _GENERIC.search(asked.lower()) is not None
    scored = [] if generic else passages.scored(asked, every, limit=WIDE)
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
