"""Web search through a SearXNG-compatible JSON API: GET /search?q=…&format=json&pageno=N."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import aiohttp

from lookout import errors
from lookout.capabilities import links
from lookout.capabilities.providers import api
from lookout.settings import Settings

NAME = "The search provider"
_HINTS = {403: " Is the json format enabled in its settings.yml (search: formats)?"}


async def results_page(
    query: str, page: int, settings: Settings, http: aiohttp.ClientSession
) -> list[dict[str, Any]]:
    """Page `page` (from 1) of results as links: {url, title, snippet}; unusable ones dropped."""
    url = f"{settings.search_url.rstrip('/')}/search?" + urlencode(
        {"q": query, "format": "json", "pageno": page}
    )
    payload = await api.call(
        NAME, url, base_url=settings.search_url, settings=settings, http=http, hints=_HINTS
    )
    items = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        raise errors.UpstreamError(f"{NAME} answered JSON without a results list.", provider=NAME)
    return [item for item in map(_link, items) if item]


def _link(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict) or not isinstance(item.get("url"), str):
        return None
    url = links.normalize(item["url"])
    if url is None:
        return None
    return {
        "url": url,
        "title": _text(item.get("title"), 1000),
        "snippet": _text(item.get("content"), 500),
    }


def _text(value: Any, limit: int) -> str | None:
    return " ".join(value.split())[:limit] or None if isinstance(value, str) else None
