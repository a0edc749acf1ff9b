"""web.scrape: fetch pages concurrently and read each; a page that fails never fails the others."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import logging
from typing import Any

import aiohttp

from lookout import errors
from lookout.capabilities import content, extract, fetch, readers, registry, rendering
from lookout.settings import Settings

logger = logging.getLogger(__name__)

# Above this many pages a call may outlast a request's patience, so it runs as a job.
INLINE_PAGES = 5


async def execute(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    """Scrape `data["urls"]`, at most settings.fetch_concurrency at a time, in input order.

    A page holds a fetch slot while it is fetched (and rendered, when it needs the browser), then
    a read slot while it waits for a reader and is read: the next fetch starts while a page is
    read (a server's latency overlaps the readers' work), and at most twice fetch_concurrency
    bodies of a call are held at once."""
    urls: list[str] = data["urls"]
    fetching = asyncio.Semaphore(ctx.settings.fetch_concurrency)
    reading = asyncio.Semaphore(ctx.settings.fetch_concurrency)
    done = 0

    async def one(url: str, session: aiohttp.ClientSession) -> dict[str, Any]:
        nonlocal done
        async with fetching:
            if await ctx.should_stop():
                return _cancelled(url)
            fetched = await _fetch(url, data, session=session, settings=ctx.settings, ctx=ctx)
        if isinstance(fetched, _Fetched):
            async with reading:
                fetched = await _read(fetched, data, settings=ctx.settings)
        done += 1
        await ctx.progress(done, len(urls))
        return fetched

    async with fetch.borrow(ctx.http, ctx.settings) as session:
        pages = await _all([asyncio.ensure_future(one(url, session)) for url in urls])
    return {"pages": pages}


async def _all(tasks: list[asyncio.Future[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every page in order; a page that needs a worker's browser stops the others at once (the
    call runs again as a job)."""
    try:
        return list(await asyncio.gather(*tasks))
    except registry.NeedsWorker as first:
        for task in tasks:
            task.cancel()
        ended = await asyncio.gather(*tasks, return_exceptions=True)
        # The job is priced for every page found to need the browser before the others stopped.
        extra = sum(e.extra_units for e in ended if isinstance(e, registry.NeedsWorker))
        raise registry.NeedsWorker(str(first), extra_units=extra) from None


async def scrape_page(
    url: str,
    options: dict[str, Any],
    *,
    session: aiohttp.ClientSession,
    settings: Settings,
    ctx: registry.VerbContext | None = None,
) -> dict[str, Any]:
    """One page of web.scrape's output, with `error` set instead of raising."""
    fetched = await _fetch(url, options, session=session, settings=settings, ctx=ctx)
    if isinstance(fetched, _Fetched):
        return await _read(fetched, options, settings=settings)
    return fetched


@dataclasses.dataclass(frozen=True)
class _Fetched:
    url: str
    fetched_at: datetime.datetime
    result: fetch.FetchResult
    fields: dict[str, Any]  # what rendering adds to the page (rendered, screenshot)


async def _fetch(
    url: str,
    options: dict[str, Any],
    *,
    session: aiohttp.ClientSession,
    settings: Settings,
    ctx: registry.VerbContext | None,
) -> _Fetched | dict[str, Any]:
    """The fetched page (rendered in the browser when asked or when the HTML is a JavaScript
    shell), or its page of output with the error."""
    fetched_at = datetime.datetime.now(datetime.UTC)
    try:
        result = await fetch.fetch(url, settings=settings, session=session)
        prepared = await rendering.prepare(result, options, ctx) if ctx else None
    except (errors.BlockedDestination, errors.FetchFailed) as exc:
        return _page(url, fetched_at, error=exc, status=exc.details.get("status"))
    except errors.InsufficientCredits as exc:  # fetched, but its rendered price is not there
        return _page(url, fetched_at, error=exc, status=result.status)
    if prepared is None:
        return _Fetched(url, fetched_at, result, {})
    return _Fetched(url, fetched_at, prepared.result, prepared.fields)


async def _read(
    fetched: _Fetched, options: dict[str, Any], *, settings: Settings
) -> dict[str, Any]:
    url, fetched_at, result = fetched.url, fetched.fetched_at, fetched.result
    reading = functools.partial(
        extract.extract,
        result.body,
        url=result.final_url,
        content_type=result.content_type or "text/html",
        charset=result.charset,
        formats=options["formats"],
        only_main_content=options["only_main_content"],
        max_chars=options["max_chars"],
    )
    try:
        read = await readers.read(settings, len(result.body), reading)
    except Exception as exc:  # a parser bug on one odd page must not cost the caller the others
        if not isinstance(exc, content.TooComplex | readers.ReadTimeout):
            logger.exception("could not read %s", result.final_url)
        unread = extract.not_read(result.final_url, exc)
        return _page(url, fetched_at, error=unread, status=result.status)
    return (
        _page(
            url,
            fetched_at,
            result=result,
            read=read,
            want_links="links" in options["formats"],
            want_data="data" in options["formats"],
        )
        | fetched.fields
    )


def _page(
    url: str,
    fetched_at: datetime.datetime,
    *,
    result: fetch.FetchResult | None = None,
    read: extract.Extracted | None = None,
    error: errors.LookoutError | None = None,
    status: int | None = None,
    want_links: bool = False,
    want_data: bool = False,
) -> dict[str, Any]:
    return {
        "url": url,
        "final_url": result.final_url if result else None,
        "status": result.status if result else status,
        "title": read.title if read else None,
        "markdown": read.markdown if read else None,
        "text": read.text if read else None,
        "html": read.html if read else None,
        "links": read.links if read and want_links else None,
        "metadata": read.metadata if read else None,
        "content_hash": read.content_hash if read else None,
        "fetched_at": fetched_at,
        "error": {"code": error.code, "message": error.message[:2000]} if error else None,
    } | ({"data": read.data if read else None} if want_data else {})


def _cancelled(url: str) -> dict[str, Any]:
    page = _page(url, datetime.datetime.now(datetime.UTC))
    page["error"] = {"code": "cancelled", "message": "The job was cancelled before this page."}
    return page


def billable_units(output: dict[str, Any]) -> int:
    """Pages fetched and read successfully; a rendered one counts rendering.RENDERED_UNITS."""
    return sum(rendering.units(page) for page in output["pages"])


def max_units(data: dict[str, Any]) -> int:
    return len(data["urls"]) * rendering.max_units(data)


def is_slow(data: dict[str, Any]) -> bool:
    """Many pages, or a browser asked for (rendering runs in workers only)."""
    forced = data.get("render") == "always" or "screenshot" in data.get("formats", ())
    return len(data["urls"]) > INLINE_PAGES or forced
