""" "What's new on <site>": find the site's most recent pages, read the first few, and answer with
their titles, dates and first lines. Recent = newest sitemap `<lastmod>` first; a site whose
sitemap has no dates is read in the order its own page lists them (a blog's index lists its
newest posts first)."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from lookout.agent import answers, passages, tools
from lookout.agent.context import TurnContext
from lookout.capabilities import registry

READ = 3  # pages read and summarized
DISCOVER_LIMIT = 100
FIRST_LINE_CHARS = 220
# A link's URL, with balanced parentheses in it ("/wiki/A_(b)"). A URL free to hold "(" ran, from
# every "](" of a page of "](" repeated, to the page's end.
_LINK = re.compile(r"\]\(((?:[^()\s]|\([^()\s]*\))+)(?:\s+\"[^\"]*\")?\)")
_ASKS = re.compile(
    r"\b(what'?s|what is|anything|something)\s+(new|latest|recent)\b|\b(latest|newest|most recent|"
    r"recent)\s+(posts?|articles?|news|updates?|entries|stories|releases?|items?)\b|"
    r"\bwhat'?s been (posted|published)\b|\bnew (posts?|articles?) on\b"
)


def asks(lowered: str) -> bool:
    """Whether a message asks for a site's latest pages."""
    return _ASKS.search(lowered) is not None


def _same_site(url: str, start: str) -> bool:
    host = (urllib.parse.urlsplit(url).hostname or "").removeprefix("www.")
    return host == (urllib.parse.urlsplit(start).hostname or "").removeprefix("www.")


def _is_start(url: str, start: str) -> bool:
    return url.rstrip("/") == start.rstrip("/")


def newest(found: list[dict[str, Any]], start: str) -> list[str]:
    """The dated links of a discovery, newest first."""
    dated = [link for link in found if link.get("lastmod") and not _is_start(link["url"], start)]
    dated.sort(key=lambda link: str(link["lastmod"]), reverse=True)
    return [link["url"] for link in dated]


def listed(page: dict[str, Any], start: str) -> list[str]:
    """The site's own links in the order the page's main content lists them."""
    markdown = page.get("markdown") or ""
    base = page.get("final_url") or page["url"]
    found = [urllib.parse.urljoin(base, href) for href in _LINK.findall(markdown)]
    return [
        url for url in dict.fromkeys(found)
        if _same_site(url, start) and not _is_start(url, start)
    ]  # fmt: skip


async def read(url: str, ctx: TurnContext) -> str:
    """Discover → (the listing, when the sitemap has no dates) → read the newest few."""
    found = await tools.ask(ctx, registry.Ask(registry.MAP, urls=(url,), limit=DISCOVER_LIMIT))
    candidates = newest((found.output or {}).get("links") or [], url)
    dates = {link["url"]: link["lastmod"] for link in (found.output or {}).get("links") or []
             if link.get("lastmod")}  # fmt: skip
    if not candidates:
        listing = await tools.ask(ctx, registry.Ask(registry.READ, urls=(url,)))
        if listing.output is None:
            return answers.failure(listing) if listing.error else _running(listing)
        candidates = listed(listing.output["pages"][0], url)
    if not candidates:
        return f"I couldn't find recent pages on {answers.host(url)}: it lists no dated pages."
    call = await tools.ask(ctx, registry.Ask(registry.READ, urls=tuple(candidates[:READ])))
    if call.output is None:
        return answers.failure(call) if call.error else _running(call)
    return _summary(url, call.output["pages"], dates)


def _running(call: tools.Call) -> str:
    return f"This is taking a while; it goes on as job {call.job_id}."


def _summary(url: str, pages: list[dict[str, Any]], dates: dict[str, str]) -> str:
    out = [f"The latest on {answers.host(url)}:"]
    for page in pages:
        if page.get("error"):
            out.append(f"- I couldn't read {page['url']}: {page['error']['message']}")
            continue
        title = page.get("title") or page["url"]
        meta = page.get("metadata") or {}
        when = meta.get("published_at") or meta.get("modified_at") or dates.get(page["url"])
        dated = f" ({str(when)[:10]})" if when else ""
        first = _first_line(page)
        line = f"- **[{title}]({page.get('final_url') or page['url']})**{dated}"
        out.append(f"{line} — {first}" if first else line)
    return "\n".join(out)


def _first_line(page: dict[str, Any]) -> str:
    title = page.get("title") or ""
    for passage in passages.split(page.get("markdown") or "", url=page["url"]):
        if passage.kind == "text" and passage.text != title and len(passage.text) > 30:
            text = passage.text
            return text if len(text) <= FIRST_LINE_CHARS else text[:FIRST_LINE_CHARS] + "…"
    return ""
