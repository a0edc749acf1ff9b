"""web.discover with `query`: a web search through a SearXNG-compatible JSON API.

The provider URL is operator configuration, often a SearXNG on the private network, so it is
fetched as trusted (address rules lifted) but only its own host is reachable.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

from lookout import errors
from lookout.capabilities import registry
from lookout.capabilities.providers import api, searxng

MAX_RESULT_PAGES = 10  # SearXNG answers ~10-20 results a page
RESULTS_PER_UNIT = 10  # priced at 1 credit per 10 results, rounded up


def units(results: int) -> int:
    """Credits' units for a search that returns (or may return) `results` links."""
    return math.ceil(results / RESULTS_PER_UNIT)


async def execute(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    """Search results as discovered links: {"links": [{url, title, snippet}], "truncated"}."""
    settings = ctx.settings
    if not settings.search_url:
        raise errors.ProviderNotConfigured(
            "Web search needs a search provider: set LOOKOUT_SEARCH_URL to a SearXNG instance "
            "with the JSON format enabled. Mapping a site by url works without one."
        )
    query = _query(data)
    limit: int = data["limit"]
    wanted = (data.get("search") or "").lower()
    found: dict[str, dict[str, Any]] = {}
    async with api.session(ctx.http, settings, settings.search_url) as http:
        for page in range(1, MAX_RESULT_PAGES + 1):
            results = await searxng.results_page(query, page, settings, http)
            for item in results:
                if not wanted or wanted in f"{item['url']} {item['title'] or ''}".lower():
                    found.setdefault(item["url"], item)
            await ctx.progress(page, MAX_RESULT_PAGES)
            if not results or len(found) > limit or await ctx.should_stop():
                break
    kept = list(found.values())
    return {"links": kept[:limit], "truncated": len(kept) > limit, "source": "search"}


def _query(data: dict[str, Any]) -> str:
    query: str = data["query"]
    host = urlsplit(data["url"]).hostname if data.get("url") else None
    return f"site:{host} {query}" if host else query
