"""Plain-language answers from verb results (the rule planner's writing)."""

from __future__ import annotations

import urllib.parse
from typing import Any

from lookout.agent.tools import Call

EXCERPT_CHARS = 700
MAX_LISTED = 10


def host(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or url


def failure(call: Call) -> str:
    """A verb error as a sentence a person can act on."""
    assert call.error is not None
    target = call.input.get("url") or (call.input.get("urls") or [""])[0] or call.input.get("query")
    where = f" {host(str(target))}" if target else ""
    return f"I couldn't get{where}: {call.error.message}"


def page_error(page: dict[str, Any]) -> str:
    return f"I couldn't read {host(page['url'])}: {page['error']['message']}"


def headings(markdown: str) -> list[str]:
    return [line.lstrip("#").strip() for line in markdown.splitlines() if line.startswith("#")]


def excerpt(markdown: str) -> str:
    """The first meaningful paragraphs, bounded, cut at a sentence where possible."""
    paragraphs = [
        block.strip()
        for block in markdown.split("\n\n")
        if block.strip() and not block.lstrip().startswith(("#", "![", "|"))
    ]
    text = " ".join(paragraphs)
    if len(text) <= EXCERPT_CHARS:
        return text
    cut = text[:EXCERPT_CHARS]
    return (cut[: cut.rfind(". ") + 1] or cut).strip() + " …"


def page(page: dict[str, Any]) -> str:
    if page.get("error"):
        return page_error(page)
    title = page.get("title") or host(page["url"])
    markdown = page.get("markdown") or ""
    out = [f"**{title}** ({page.get('final_url') or page['url']})"]
    heads = [h for h in headings(markdown) if h and h != title][:6]
    if heads:
        out.append("Sections: " + "; ".join(heads) + ".")
    body = excerpt(markdown)
    if body:
        out.append(body)
    return "\n".join(out)


def compare(pages: list[dict[str, Any]]) -> str:
    """Several pages side by side: title, size and main sections of each."""
    out = [f"Here are the {len(pages)} pages side by side:"]
    for item in pages:
        if item.get("error"):
            out.append(f"- {page_error(item)}")
            continue
        markdown = item.get("markdown") or ""
        words = len(markdown.split())
        heads = "; ".join(headings(markdown)[:4]) or "no sections"
        out.append(f"- **{item.get('title') or host(item['url'])}** — {words} words; {heads}")
    out.append("")
    out += [page(item) for item in pages if not item.get("error")]
    return "\n".join(out)


def links(output: dict[str, Any], target: str) -> str:
    found = output.get("links") or []
    if not found:
        return f"I found no pages for {target}."
    more = " (there are more)" if output.get("truncated") else ""
    out = [f"I found {len(found)} pages for {target}{more}:"]
    out += [f"- {item.get('title') or item['url']} — {item['url']}" for item in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        out.append(f"… and {len(found) - MAX_LISTED} more.")
    return "\n".join(out)


def places(output: dict[str, Any], query: str) -> str:
    found = output.get("places") or []
    if not found:
        return f"I found no places for “{query}”."
    out = [f"Places for “{query}”:"]
    for item in found[:MAX_LISTED]:
        rating = f", rated {item['rating']}" if item.get("rating") is not None else ""
        out.append(f"- **{item['name']}** — {item.get('address') or ''}{rating}")
    return "\n".join(out)


def reviews(output: dict[str, Any]) -> str:
    place = output.get("place") or {}
    found = output.get("reviews") or []
    out = [f"Reviews of **{place.get('name', 'the place')}** ({len(found)} shown):"]
    for item in found[:5]:
        text = (item.get("text") or "").strip().replace("\n", " ")[:240]
        out.append(f"- {item.get('rating', '?')}★ {item.get('author') or 'someone'}: {text}")
    return "\n".join(out)


def of_output(verb: str, output: dict[str, Any], arguments: dict[str, Any]) -> str:
    """Plain words for any verb's output (a job result posted to the chat later)."""
    if verb == "web.scrape":
        pages = output.get("pages") or []
        return compare(pages) if len(pages) > 1 else (page(pages[0]) if pages else "No pages.")
    if verb == "web.discover":
        return links(output, str(arguments.get("url") or arguments.get("query") or "the site"))
    if verb == "maps.search":
        return places(output, str(arguments.get("query", "")))
    if verb == "maps.reviews":
        return reviews(output)
    return f"{verb} finished."
