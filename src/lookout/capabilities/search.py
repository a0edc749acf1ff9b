"""web.discover with `query`: a web search through a SearXNG-compatible JSON API.

The provider URL is operator configuration, often a SearXNG on the private network, so it is
fetched as trusted (address rules lifted; size and time limits kept).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp

from lookout import errors
from lookout.capabilities import fetch, links, registry
from lookout.settings import Settings

MAX_RESULT_PAGES = 10  # SearXNG answers ~10-20 results a page
_JSON_TYPES = ("application/json",)


async def execute(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    """Search results as discovered links: {"links": [{url, title, snippet}], "truncated"}."""
    if not ctx.settings.searxng_url:
        raise errors.ProviderNotConfigured(
            "Web search needs a search provider: set LOOKOUT_SEARXNG_URL to a SearXNG instance "
            "with the JSON format enabled. Mapping a site by url works without one."
        )
    query = _query(data)
    limit: int = data["limit"]
    wanted = (data.get("search") or "").lower()
    found: dict[str, dict[str, Any]] = {}
    async with fetch.borrow(ctx.http, ctx.settings, trusted=True) as session:
        for page in range(1, MAX_RESULT_PAGES + 1):
            results = await _results_page(query, page, session, ctx.settings)
            for item in results:
                if not wanted or wanted in f"{item['url']} {item['title'] or ''}".lower():
                    found.setdefault(item["url"], item)
            await ctx.progress(page, MAX_RESULT_PAGES)
            if not results or len(found) > limit or await ctx.should_stop():
                break
    kept = list(found.values())
    return {"links": kept[:limit], "truncated": len(kept) > limit}


def _query(data: dict[str, Any]) -> str:
    query: str = data["query"]
    host = urlsplit(data["url"]).hostname if data.get("url") else None
    return f"site:{host} {query}" if host else query


async def _results_page(
    query: str, page: int, session: aiohttp.ClientSession, settings: Settings
) -> list[dict[str, Any]]:
    url = f"{settings.searxng_url.rstrip('/')}/search?" + urlencode(
        {"q": query, "format": "json", "pageno": page}
    )
    try:
        result = await fetch.fetch(
            url, settings=settings, session=session, accept=_JSON_TYPES, trusted=True
        )
        payload = json.loads(result.body)
    except errors.FetchFailed as exc:
        hint = " (is the json format enabled in its settings.yml?)" if "403" in exc.message else ""
        raise errors.UpstreamError(f"The search provider failed: {exc.message}{hint}") from None
    except ValueError:
        raise errors.UpstreamError(
            "The search provider answered something that is not JSON."
        ) from None
    items = payload.get("results") if isinstance(payload, dict) else None
    return [item for item in map(_link, items if isinstance(items, list) else []) if item]


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
