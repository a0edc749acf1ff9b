"""Plain-language answers from verb results (the rule planner's writing)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from lookout.agent import comparing, reading
from lookout.agent.tools import Call
from lookout.capabilities import registry

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


def _pages(output: dict[str, Any], arguments: dict[str, Any]) -> str:
    pages = output.get("pages") or []
    if len(pages) > 1:
        return comparing.compare(pages)
    if not pages:
        return "No pages."
    return page_error(pages[0]) if pages[0].get("error") else reading.lead(pages[0])


# Plain words for each way an output reads (registry.Verb.reads_as).
_WORDS: dict[str, Callable[[dict[str, Any], dict[str, Any]], str]] = {
    "pages": _pages,
    "links": lambda output, arguments: links(
        output, str(arguments.get("url") or arguments.get("query") or "the site")
    ),
    "places": lambda output, arguments: places(output, str(arguments.get("query", ""))),
    "reviews": lambda output, arguments: reviews(output),
}


def of_output(verb: str, output: dict[str, Any], arguments: dict[str, Any]) -> str:
    """Plain words for any verb's output (a job result posted to the chat later)."""
    words = _WORDS.get(registry.reads_as(verb))
    return words(output, arguments) if words is not None else f"{verb} finished."
