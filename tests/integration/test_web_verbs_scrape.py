"""web.scrape end to end against local pages, through the registry as every door calls it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout.capabilities import fetch, registry
from lookout.settings import Settings
from tests.integration import webpages
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("loopback_only")

SETTINGS = webpages.make_settings(fetch_timeout_s=1.0, fetch_max_bytes=300_000)
STORY = webpages.article(
    "Council approves budget",
    "<h1>Council approves budget</h1><p>The vote passed <em>7 to 2</em> after "
    '<a href="/minutes/2024-05.html">a long debate</a>.</p>'
    "<h2>Where the money goes</h2><ol><li>Schools</li><li>Roads</li></ol>"
    "<table><tr><th>Item</th><th>Amount</th></tr><tr><td>Schools</td><td>4.1m</td></tr></table>",
)


@pytest.fixture
async def site(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> AsyncIterator[tuple[webpages.Site, TestServer]]:
    pages = webpages.Site()
    yield pages, await aiohttp_server(pages.app())


async def _scrape(
    raw: dict[str, Any], settings: Settings = SETTINGS, **context: Any
) -> tuple[dict[str, Any], webpages.Recorder]:
    verb = registry.get("web.scrape")
    data = registry.validate_input(verb, raw)
    async with fetch.open_session(settings) as http:
        ctx, progress = webpages.context(settings, http, **context)
        output = await verb.execute(data, ctx)
    return registry.dump_output(verb, output), progress


async def test_a_page_comes_back_as_clean_markdown_with_absolute_links(
    site: tuple[webpages.Site, TestServer],
) -> None:
    pages, server = site
    pages.add("/news/budget.html", STORY)
    url = str(server.make_url("/news/budget.html"))
    output, _ = await _scrape({"url": url, "formats": ["markdown", "links"]})
    page = output["pages"][0]
    assert page["error"] is None
    assert (page["status"], page["final_url"], page["title"]) == (
        200,
        url,
        "Council approves budget",
    )
    markdown = page["markdown"]
    assert "# Council approves budget" in markdown and "## Where the money goes" in markdown
    assert "1. Schools" in markdown
    assert re.search(r"\| Schools +\| 4\.1m +\|", markdown)  # columns may be padded
    assert f"[a long debate]({server.make_url('/minutes/2024-05.html')})" in markdown
    for boilerplate in ("About us", "cookies", "Popular elsewhere", "Copyright", "tracking"):
        assert boilerplate not in markdown
    assert str(server.make_url("/minutes/2024-05.html")) in page["links"]
    assert page["content_hash"].startswith("sha256:")
    assert page["text"] is None  # not asked for


async def test_charsets_from_the_header_and_from_meta(
    site: tuple[webpages.Site, TestServer],
) -> None:
    pages, server = site
    header = webpages.article("Crème brûlée", "<p>Prix : 5 €</p>")
    meta = webpages.article("Привет", "<p>Мир</p>", head='<meta charset="koi8-r">')
    pages.add("/fr", header.encode("cp1252"), content_type="text/html; charset=windows-1252")
    pages.add("/ru", meta.encode("koi8-r"), content_type="text/html")
    output, _ = await _scrape({"urls": [str(server.make_url(p)) for p in ("/fr", "/ru")]})
    french, russian = output["pages"]
    assert french["title"] == "Crème brûlée" and "Prix : 5 €" in french["markdown"]
    assert russian["title"] == "Привет" and "Мир" in russian["markdown"]


async def test_good_and_bad_urls_in_one_call_fail_one_by_one(
    site: tuple[webpages.Site, TestServer],
) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(text="late", content_type="text/html")

    pages, server = site
    pages.add("/ok", STORY)
    pages.add("/missing", "<h1>Not here</h1>", status=404)
    pages.handle("/slow", slow)
    pages.add("/huge", b"<p>" + b"x" * 400_000, content_type="text/html")
    pages.add("/report.pdf", b"%PDF-1.7 binary", content_type="application/pdf")
    paths = ["/ok", "/missing", "/slow", "/huge", "/report.pdf"]
    urls = [str(server.make_url(path)) for path in paths]
    urls.append("http://169.254.169.254/latest/meta-data/")
    output, progress = await _scrape({"urls": urls})
    by_path = dict(zip([*paths, "metadata"], output["pages"], strict=True))
    assert [page["url"] for page in output["pages"]] == urls
    assert by_path["/ok"]["error"] is None and by_path["/ok"]["markdown"]
    assert by_path["/missing"]["status"] == 404
    assert "HTTP 404" in by_path["/missing"]["error"]["message"]
    assert "Timed out" in by_path["/slow"]["error"]["message"]
    assert "larger than" in by_path["/huge"]["error"]["message"]
    assert "application/pdf" in by_path["/report.pdf"]["error"]["message"]
    assert by_path["metadata"]["error"]["code"] == "blocked_destination"
    failed = [page for page in output["pages"] if page["error"]]
    assert all(page["error"]["code"] in {"fetch_failed", "blocked_destination"} for page in failed)
    assert registry.get("web.scrape").billable_units(output) == 1
    assert progress.calls[-1] == (6, 6)


async def test_pages_are_fetched_concurrently_but_bounded(
    site: tuple[webpages.Site, TestServer],
) -> None:
    in_flight: list[int] = [0]
    peak: list[int] = [0]

    async def tracked(request: web.Request) -> web.Response:
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        await asyncio.sleep(0.1)
        in_flight[0] -= 1
        return web.Response(text=STORY, content_type="text/html")

    pages, server = site
    for index in range(8):
        pages.handle(f"/p{index}", tracked)
    urls = [str(server.make_url(f"/p{index}")) for index in range(8)]
    output, _ = await _scrape({"urls": urls}, SETTINGS.replace(fetch_concurrency=3))
    assert all(page["error"] is None for page in output["pages"])
    assert peak[0] == 3


async def test_the_content_hash_ignores_cosmetic_changes_and_sees_real_ones(
    site: tuple[webpages.Site, TestServer],
) -> None:
    pages, server = site
    restyled = STORY.replace("<p>", '<p class="lead-v2">').replace("About us", "Careers")
    edited = STORY.replace("7 to 2", "6 to 3")
    for path, html in (("/v1", STORY), ("/v2", restyled), ("/v3", edited)):
        pages.add(path, html)
    output, _ = await _scrape({"urls": [str(server.make_url(p)) for p in ("/v1", "/v2", "/v3")]})
    first, cosmetic, real = (page["content_hash"] for page in output["pages"])
    assert first == cosmetic
    assert first != real


async def test_text_html_and_whole_page_formats(site: tuple[webpages.Site, TestServer]) -> None:
    pages, server = site
    pages.add("/", STORY)
    raw = {
        "url": str(server.make_url("/")),
        "formats": ["text", "html"],
        "only_main_content": False,
    }
    page = (await _scrape(raw))[0]["pages"][0]
    assert page["markdown"] is None and page["links"] is None
    assert "Copyright 2024" in page["text"] and "7 to 2" in page["text"]
    assert f'href="{server.make_url("/minutes/2024-05.html")}"' in page["html"]
    assert "<script" not in page["html"]


async def test_a_cancelled_job_stops_before_fetching(
    site: tuple[webpages.Site, TestServer],
) -> None:
    pages, server = site
    pages.add("/", STORY)

    async def cancelled() -> bool:
        return True

    output, _ = await _scrape({"url": str(server.make_url("/"))}, cancelled=cancelled)
    assert output["pages"][0]["error"]["code"] == "cancelled"
    assert pages.hits == []


async def test_a_page_too_deeply_nested_fails_alone_with_a_clear_error(
    site: tuple[webpages.Site, TestServer],
) -> None:
    pages, server = site
    pages.add("/deep.html", "<html><body>" + "<div>" * 20_000 + "x" + "</div>" * 20_000)
    pages.add("/news/budget.html", STORY)
    urls = [str(server.make_url("/deep.html")), str(server.make_url("/news/budget.html"))]
    output, _ = await _scrape({"urls": urls})
    deep, story = output["pages"]
    assert deep["error"]["code"] == "fetch_failed"
    assert "nests elements more than 5000 deep" in deep["error"]["message"]
    assert deep["markdown"] is None and deep["metadata"] is None
    assert story["error"] is None and "Council approves budget" in story["markdown"]
    assert story["metadata"]["title"] == "Council approves budget"
