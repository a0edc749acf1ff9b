"""web.scrape reads pages in this process's reader processes; one too slow fails alone."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from lookout.capabilities import fetch, readers, registry
from tests.integration import webpages
from tests.integration.webpages import fresh_readers, loopback_only  # noqa: F401 - fixtures

pytestmark = pytest.mark.usefixtures("loopback_only")

SETTINGS = webpages.make_settings(fetch_timeout_s=5.0)
PARAGRAPH = "<p>The council met on Tuesday and approved the budget for the coming year.</p>"
LONG = webpages.article("Budget approved", "<h1>Budget approved</h1>" + PARAGRAPH * 60)
SHORT = webpages.article("Short", "<h1>Short</h1><p>One line.</p>")


@pytest.fixture
async def site(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> AsyncIterator[TestServer]:
    pages = webpages.Site()
    pages.add("/long.html", LONG)
    pages.add("/short.html", SHORT)
    yield await aiohttp_server(pages.app())


async def _scrape(urls: list[str]) -> list[dict[str, Any]]:
    verb = registry.get("web.scrape")
    async with fetch.open_session(SETTINGS) as http:
        ctx, _ = webpages.context(SETTINGS, http)
        output = await verb.execute(registry.validate_input(verb, {"urls": urls}), ctx)
    pages: list[dict[str, Any]] = registry.dump_output(verb, output)["pages"]
    return pages


@pytest.mark.usefixtures("fresh_readers")
async def test_a_page_is_read_in_a_reader_process_a_tiny_one_on_the_loop(
    site: TestServer,
) -> None:
    assert len(SHORT) <= readers.INLINE_BYTES < len(LONG)
    await _scrape([str(site.make_url("/short.html"))])
    assert readers.current() is None  # a process that read no big page started no reader
    long, short = await _scrape([str(site.make_url(p)) for p in ("/long.html", "/short.html")])
    assert long["error"] is None and "# Budget approved" in long["markdown"]
    assert long["markdown"].count("approved the budget") == 60
    assert short["error"] is None and "One line." in short["markdown"]
    pool = readers.current()
    assert pool is not None and pool.cpu_s() > 0  # the readers did the reading


@pytest.mark.usefixtures("fresh_readers")
async def test_a_page_not_read_in_time_fails_alone_with_a_clear_error(
    site: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "TIMEOUT_S", 0.000_001)
    long, short = await _scrape([str(site.make_url(p)) for p in ("/long.html", "/short.html")])
    assert long["error"]["code"] == "fetch_failed"
    assert "was fetched but not read: not read within 1e-06 s" in long["error"]["message"]
    assert long["markdown"] is None and long["status"] == 200
    assert short["error"] is None and "One line." in short["markdown"]
