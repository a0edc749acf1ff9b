"""What a scheduled turn's looks found, as stream parts: a `data-change` part per changed source
(what notifications are made of) and one `data-diff` part, the run's result
`{changed, modified, added, removed, moved, counts, sources}` that is kept on the run; and what of
a scheduled turn's answer is stored.

A scheduled run's stored answer keeps its verdict and what changed, not the page again: the
page's snapshot lives once, in the checkpoint (agent.changes). On realistic pages the full
web.scrape output in every run's message was most of a watch's storage (bench/_storage.py).
"""

from __future__ import annotations

from typing import Any

from lookout import parts
from lookout.agent import changes
from lookout.capabilities import registry

DIFF_PART = "data-diff"
EXCERPT_CHARS = 400  # of a page's markdown kept in a stored scheduled answer: the card's excerpt
# What of each scraped page a stored scheduled answer keeps (the web page's tool card shows these)
_PAGE_KEPT = ("url", "final_url", "status", "title", "error", "fetched_at", "content_hash")


def parts_of(diffs: list[dict[str, Any]]) -> list[parts.Part]:
    changed = [data for data in diffs if data["changed"]]
    out: list[parts.Part] = [
        {"type": "data-change", "data": data} for data in changes.trimmed(changed)
    ]
    if diffs:
        out.append({"type": DIFF_PART, "data": changes.run_data(diffs)})
    return out


def run_data(emitted: list[parts.Part]) -> dict[str, Any] | None:
    """The run's result among a turn's parts (None when it compared nothing: a first look)."""
    found = [part for part in emitted if part.get("type") == DIFF_PART]
    return dict(found[-1]["data"]) if found else None


def stored(message_parts: list[parts.Part]) -> list[parts.Part]:
    """A scheduled turn's message parts as stored: each page read (web.scrape's) its identity,
    status, hash and a short excerpt, not its whole content, text, links or data."""
    return [_stored(part) for part in message_parts]


def _stored(part: parts.Part) -> parts.Part:
    output = part.get("output")
    if not _reads_pages(part) or not isinstance(output, dict):
        return part
    pages = output.get("pages")
    if not isinstance(pages, list):
        return part
    return {**part, "output": {**output, "pages": [_page(page) for page in pages]}}


def _reads_pages(part: parts.Part) -> bool:
    """Whether `part` is the output of a verb that reads pages (web.scrape's tool part)."""
    kind = str(part.get("type") or "")
    verb = registry.for_tool(kind.removeprefix("tool-")) if kind.startswith("tool-") else None
    return verb is not None and verb.reads_as == "pages"


def _page(page: Any) -> Any:
    if not isinstance(page, dict):
        return page
    kept = {key: page[key] for key in _PAGE_KEPT if key in page}
    if page.get("markdown"):
        kept["markdown"] = str(page["markdown"])[:EXCERPT_CHARS]
    return kept
