"""The web verbs, registered: web.scrape and web.discover."""

from __future__ import annotations

from typing import Any

from lookout.capabilities import discover, registry, scrape
from lookout.schema import verbs


def _limited(ask: registry.Ask) -> dict[str, Any]:
    return {} if ask.limit is None else {"limit": ask.limit}


def _read(ask: registry.Ask) -> dict[str, Any]:
    """web.scrape's input for READ: the pages (at most MAX_URLS), their structured data too."""
    data: dict[str, Any] = {"urls": list(ask.urls[: verbs.MAX_URLS])}
    if ask.structured:  # a condition or a field may read the page's data (price, stock)
        data["formats"] = ["markdown", "data"]
    return data


def _find(ask: registry.Ask) -> dict[str, Any]:
    """web.discover's input for MAP (a site's pages) or SEARCH (the web)."""
    if ask.need == registry.MAP:
        return {"url": ask.urls[0], **_limited(ask)}
    return {"query": ask.query, **_limited(ask)}


def _urls_of(data: dict[str, Any]) -> list[str]:
    urls = data.get("urls") or [data.get("url")]
    return [url for url in urls if isinstance(url, str)]


SCRAPE = registry.register(
    registry.Verb(
        name="web.scrape",
        title="Scrape web pages",
        description=(
            "Fetch web pages now (1 to 20 URLs) and read them: title, main content as markdown "
            "(or text, links, cleaned html), HTTP status, final URL after redirects, and a "
            "content_hash that changes only when the text changes. Use it to read, quote, "
            "summarize or compare pages whose URLs you already have, or to check whether a page "
            "changed. Do not use it to find pages: web.discover lists a site's URLs or searches "
            "the web. A page that fails carries its own error and the others still return. "
            "Pages that build their content with JavaScript are rendered in a browser "
            "(render: auto, the default; always; never), wait_for a selector or milliseconds; "
            "formats screenshot returns a PNG's URL. 1 credit per page fetched successfully, "
            "3 per rendered page (always, screenshot, or auto when the page needs a browser: "
            "auto reserves 1 and tops up to 3 before rendering; a page the balance cannot "
            "cover answers insufficient_credits unrendered). Failed pages are free."
        ),
        input_schema=verbs.ScrapeInputSchema,
        output_schema=verbs.ScrapeOutputSchema,
        execute=scrape.execute,
        price=1,
        max_units=scrape.max_units,
        billable_units=scrape.billable_units,
        slow=scrape.is_slow,
        reads_as="pages",
        serves=frozenset({registry.READ}),
        fill=_read,
        urls_of=_urls_of,
        keep_rendering={"render": "always"},
    )
)


DISCOVER = registry.register(
    registry.Verb(
        name="web.discover",
        title="Discover URLs",
        description=(
            "Find URLs. With url: list the pages of that site from its robots.txt sitemaps, "
            "sitemap indexes and on-page links (same site only unless include_subdomains; "
            "search filters by text; at most limit links, truncated says if there were more). "
            "With query: search the web (needs a configured search provider). Use it to find "
            "which pages exist before reading them with web.scrape; it does not return page "
            "content. Mapping a site: 1 credit per call; a search: 1 credit per 10 results "
            "returned, rounded up."
        ),
        input_schema=verbs.DiscoverInputSchema,
        output_schema=verbs.DiscoverOutputSchema,
        execute=discover.execute,
        price=1,
        max_units=discover.max_units,
        billable_units=discover.billable_units,
        slow=discover.is_slow,
        reads_as="links",
        serves=frozenset({registry.MAP, registry.SEARCH}),
        fill=_find,
    )
)
