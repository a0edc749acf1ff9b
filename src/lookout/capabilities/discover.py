"""web.discover on a site: robots.txt sitemaps, sitemap indexes, then a bounded link crawl."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from lookout import errors
from lookout.capabilities import (
    content,
    extract,
    fetch,
    inflate,
    links,
    readers,
    registry,
    search,
    sitemaps,
)

logger = logging.getLogger(__name__)

MAX_DEPTH = 2  # link hops from the start page
MAX_SITEMAPS = 50
MAX_SITEMAP_NESTING = 3
MAX_PAGES = 200
INLINE_PAGES = 20  # a crawl allowed more pages than this runs as a job
_SITEMAP_TYPES: tuple[str, ...] = ()  # sitemaps come as every XML, gzip and text type there is


def page_budget(limit: int) -> int:
    """How many pages a discovery of `limit` links may fetch."""
    return min(MAX_PAGES, max(10, limit // 10))


def is_slow(data: dict[str, Any]) -> bool:
    return not data.get("query") and page_budget(data["limit"]) > INLINE_PAGES


def max_units(data: dict[str, Any]) -> int:
    """Mapping a site is one unit; a search is one per 10 results it may return."""
    return search.units(data["limit"]) if data.get("query") else 1


def billable_units(output: dict[str, Any]) -> int:
    """Mapping a site is one unit; a search is one per 10 results it returned."""
    return search.units(len(output["links"])) if output.get("source") == "search" else 1


async def execute(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    """List a site's URLs, or with `query`, search the web."""
    if data.get("query"):
        return await search.execute(data, ctx)
    seconds = ctx.settings.fetch_timeout_s * (10 if is_slow(data) else 2)
    async with fetch.borrow(ctx.http, ctx.settings) as session:
        crawl = Crawl(data, ctx, session)
        try:
            async with asyncio.timeout(seconds):
                await crawl.run()
        except TimeoutError:
            crawl.incomplete = True
    return {**crawl.result(), "source": "site"}


def _site(host: str) -> str:
    return host.lower().rstrip(".").removeprefix("www.")


@dataclasses.dataclass
class _Found:
    title: str | None = None
    snippet: str | None = None
    lastmod: str | None = None


class Crawl:
    """The state of one discovery; `result()` is valid whenever `run()` stops, even cut short."""

    def __init__(
        self, data: dict[str, Any], ctx: registry.VerbContext, session: aiohttp.ClientSession
    ) -> None:
        start = links.normalize(data["url"])
        if start is None:
            problem = "Must be an absolute http or https URL."
            raise errors.InvalidInput(f"url: {problem}", fields={"url": [problem]})
        self.start = start
        self.site = _site(urlsplit(start).hostname or "")
        self.limit: int = data["limit"]
        self.subdomains: bool = data["include_subdomains"]
        self.search: str = (data.get("search") or "").lower()
        self.ctx, self.session = ctx, session
        self.found: dict[str, _Found] = {}
        self.pages_left = page_budget(self.limit)
        self.matching = 0
        self.incomplete = False
        self.robots = sitemaps.no_robots()
        self.start_error: errors.LookoutError | None = None

    def result(self) -> dict[str, Any]:
        """The links found; if none were and the start page itself failed, that failure."""
        if not self.found and self.start_error is not None:
            raise self.start_error
        kept = [
            {"url": url, "title": found.title, "snippet": found.snippet}
            | ({"lastmod": found.lastmod} if found.lastmod else {})
            for url, found in self.found.items()
            if self._matches(url, found)
        ]
        truncated = len(kept) > self.limit or self.incomplete
        return {"links": kept[: self.limit], "truncated": truncated}

    async def run(self) -> None:
        await self._read_robots()
        await self._read_sitemaps(self.robots.sitemaps or [self._root("/sitemap.xml")])
        if not self._full():
            await self._crawl()

    def _root(self, path: str) -> str:
        parts = urlsplit(self.start)
        return f"{parts.scheme}://{parts.netloc}{path}"

    def _in_site(self, url: str) -> bool:
        host = _site(urlsplit(url).hostname or "")
        return host == self.site or (self.subdomains and host.endswith("." + self.site))

    def _matches(self, url: str, found: _Found) -> bool:
        return not self.search or self.search in f"{url} {found.title or ''}".lower()

    def _full(self) -> bool:
        # One more than the limit tells the caller that more exist.
        return self.matching > self.limit

    def _add(
        self, url: str, title: str | None = None, snippet: str | None = None, *, own: bool = False
    ) -> bool:
        """Record a link of the site; a page's `own` title wins over any link text to it."""
        if not self._in_site(url):
            return False
        found = self.found.get(url)
        matched_before = found is not None and self._matches(url, found)
        if found is None:
            found = self.found[url] = _Found()
        found.title = (title or found.title) if own else (found.title or title)
        found.snippet = (snippet or found.snippet) if own else (found.snippet or snippet)
        self.matching += self._matches(url, found) and not matched_before
        return True

    async def _get(self, url: str, accept: tuple[str, ...]) -> fetch.FetchResult | None:
        try:
            return await fetch.fetch(
                url, settings=self.ctx.settings, session=self.session, accept=accept
            )
        except (errors.FetchFailed, errors.BlockedDestination) as exc:
            logger.info("discover: skipping %s: %s", url, exc.message)
            if url == self.start:
                self.start_error = exc
            return None

    async def _read_robots(self) -> None:
        url = self._root("/robots.txt")
        result = await self._get(url, ())  # robots.txt is often served with the wrong type
        if result is not None:
            text = result.body.decode(result.charset or "utf-8", errors="replace")
            self.robots = await asyncio.to_thread(sitemaps.parse_robots, text, url)

    async def _read_sitemaps(self, roots: list[str]) -> None:
        queue = [(url, 0) for url in roots]
        seen: set[str] = set()
        while queue and len(seen) < MAX_SITEMAPS and not self._full():
            url, nesting = queue.pop(0)
            if url in seen or nesting > MAX_SITEMAP_NESTING:
                continue
            seen.add(url)
            sitemap = await self._sitemap(url)
            queue.extend((child, nesting + 1) for child in sitemap.sitemaps)
            for page in sitemap.pages:
                added = self._add(page)
                if added and page in sitemap.lastmod:
                    self.found[page].lastmod = sitemap.lastmod[page]
                if added and self._full():
                    return
        self.incomplete = self.incomplete or bool(queue)

    async def _sitemap(self, url: str) -> sitemaps.Sitemap:
        result = await self._get(url, _SITEMAP_TYPES)
        if result is None:
            return sitemaps.Sitemap(sitemaps=[], pages=[])
        max_bytes = self.ctx.settings.fetch_max_bytes
        try:
            # A sitemap can be megabytes of XML: parse it off the event loop.
            return await asyncio.to_thread(
                sitemaps.parse_sitemap, result.body, base=result.final_url, max_bytes=max_bytes
            )
        except (inflate.TooLarge, inflate.BadEncoding):
            logger.info("discover: unreadable sitemap %s", url)
            return sitemaps.Sitemap(sitemaps=[], pages=[])

    async def _crawl(self) -> None:
        level = [self.start]
        visited: set[str] = set()
        for depth in range(MAX_DEPTH + 1):
            level = [
                url for url in dict.fromkeys(level) if url not in visited and self._allowed(url)
            ]
            batch, rest = level[: self.pages_left], level[self.pages_left :]
            visited.update(batch)
            self.pages_left -= len(batch)
            found_next = await self._visit_all(batch, follow=depth < MAX_DEPTH)
            await self.ctx.progress(len(visited), len(visited) + self.pages_left)
            if rest or self._full() or await self.ctx.should_stop():
                self.incomplete = self.incomplete or bool(rest)
                return
            level = found_next

    def _allowed(self, url: str) -> bool:
        return self._in_site(url) and self.robots.allows(self.ctx.settings.user_agent, url)

    async def _visit_all(self, urls: list[str], *, follow: bool) -> list[str]:
        gate = asyncio.Semaphore(self.ctx.settings.fetch_concurrency)

        async def visit(url: str) -> Iterable[str]:
            async with gate:
                return await self._visit(url)

        outcomes = await asyncio.gather(*(visit(url) for url in urls))
        return [url for found in outcomes for url in found] if follow else []

    async def _visit(self, url: str) -> list[str]:
        result = await self._get(url, fetch.HTML_TYPES)
        outlined = await self._outline(url, result) if result is not None else None
        if outlined is None:
            return []
        title, snippet, page_links = outlined
        self._add(url, title, snippet, own=True)
        return [link for link, anchor in page_links if self._add(link, anchor or None)]

    async def _outline(
        self, url: str, result: fetch.FetchResult
    ) -> tuple[str | None, str, list[tuple[str, str]]] | None:
        """The page's title, snippet and links, read as web.scrape reads a page: over
        readers.INLINE_BYTES in a reader process (readers.py), so the event loop keeps serving
        while a large page is parsed, and a page past the readers' time budget, or one that
        crashes its reader, costs only itself; None for a page not read (the start page's reason
        is what the call says if it finds nothing else)."""
        outlining = functools.partial(
            extract.outline, result.body, url=result.final_url, charset=result.charset
        )
        try:
            return await readers.read(self.ctx.settings, len(result.body), outlining)
        except Exception as exc:  # a parser bug on one odd page must not cost the crawl the rest
            if isinstance(exc, content.TooComplex | readers.ReadTimeout):
                logger.info("discover: not reading %s: %s", url, exc)
            else:
                logger.exception("discover: could not read %s", url)
            if url == self.start:  # said if nothing else is found (result())
                self.start_error = extract.not_read(result.final_url, exc)
        return None
