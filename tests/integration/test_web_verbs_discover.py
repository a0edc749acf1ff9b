"""web.discover end to end: sitemaps, robots.txt, on-page links, bounds, and the search seam."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout import errors
from lookout.capabilities import fetch, readers, registry
from lookout.settings import Settings
from tests.integration import webpages
from tests.integration.webpages import fresh_readers, loopback_only  # noqa: F401 - fixtures

pytestmark = pytest.mark.usefixtures("loopback_only")

SETTINGS = webpages.make_settings(fetch_timeout_s=2.0)
HOSTS = ("site.test", "www.site.test", "blog.site.test", "other.test")


class Lab:
    """One local server answering as several hosts (a fake DNS points them all at it)."""

    def __init__(self, site: webpages.Site, server: TestServer) -> None:
        self.site, self.server = site, server
        self.resolver = webpages.FakeResolver({host: ["127.0.0.1"] for host in HOSTS})

    def url(self, path: str, host: str = "site.test") -> str:
        return f"http://{host}:{self.server.port}{path}"

    def page(self, path: str, title: str, *links: str, prose: str = "") -> None:
        anchors = "".join(
            f'<a href="{link}">Link to {link.rsplit("/", 1)[-1]}</a> ' for link in links
        )
        body = f"<main>{prose}</main>{anchors}"
        self.site.add(path, f"<html><head><title>{title}</title></head><body>{body}</body></html>")

    async def discover(
        self, raw: dict[str, Any], settings: Settings = SETTINGS
    ) -> tuple[dict[str, Any], webpages.Recorder]:
        verb = registry.get("web.discover")
        data = registry.validate_input(verb, {"url": self.url("/"), **raw})
        async with fetch.open_session(settings, resolver=self.resolver) as http:
            ctx, progress = webpages.context(settings, http)
            output = await verb.execute(data, ctx)
        return registry.dump_output(verb, output), progress


@pytest.fixture
async def lab(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> AsyncIterator[Lab]:
    site = webpages.Site()
    yield Lab(site, await aiohttp_server(site.app()))


def _urls(output: dict[str, Any]) -> list[str]:
    return [link["url"] for link in output["links"]]


def _urlset(*urls: str) -> str:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'


def _index(*urls: str) -> str:
    entries = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>'


async def test_robots_sitemap_index_with_nested_gzip_sitemaps(lab: Lab) -> None:
    lab.site.add(
        "/robots.txt",
        f"User-agent: *\nSitemap: {lab.url('/index.xml')}\n",
        content_type="text/plain",
    )
    lab.site.add(
        "/index.xml",
        _index(lab.url("/posts.xml.gz"), lab.url("/more-index.xml")),
        content_type="application/xml",
    )
    lab.site.add("/more-index.xml", _index(lab.url("/pages.xml")), content_type="application/xml")
    posts = _urlset(lab.url("/posts/1"), lab.url("/posts/2"), "http://other.test/elsewhere")
    lab.site.add("/posts.xml.gz", gzip.compress(posts.encode()), content_type="application/gzip")
    lab.site.add(
        "/pages.xml", _urlset(lab.url("/about"), lab.url("/posts/1")), content_type="text/xml"
    )
    lab.page("/", "Home")
    output, _ = await lab.discover({})
    urls = _urls(output)
    assert urls[:3] == [lab.url("/posts/1"), lab.url("/posts/2"), lab.url("/about")]
    assert lab.url("/") in urls
    assert not any("other.test" in url for url in urls)
    assert output["truncated"] is False


async def test_without_a_robots_sitemap_line_the_default_sitemap_is_read(lab: Lab) -> None:
    lab.site.add("/sitemap.xml", _urlset(lab.url("/from-default")), content_type="application/xml")
    output, _ = await lab.discover({})
    assert lab.url("/from-default") in _urls(output)


async def test_on_page_links_are_crawled_with_titles_and_anchor_texts(lab: Lab) -> None:
    lab.page("/", "Home page", "/a", "/b#section", "http://other.test/x", "mailto:x@site.test")
    lab.page("/a", "Page A", "/c")
    lab.page("/b", "Page B")
    lab.page("/c", "Page C", "/d")
    lab.page("/d", "Page D", "/e")
    output, progress = await lab.discover({})
    titles = {link["url"]: link["title"] for link in output["links"]}
    assert titles == {
        lab.url("/"): "Home page",
        lab.url("/a"): "Page A",
        lab.url("/b"): "Page B",
        lab.url("/c"): "Page C",
        lab.url("/d"): "Link to d",  # found at the depth limit: known by its link text only
    }
    assert "/d" not in lab.site.hits and "/e" not in lab.site.hits
    assert progress.calls


async def test_subdomains_only_when_asked(lab: Lab) -> None:
    lab.page(
        "/",
        "Home",
        lab.url("/x", "www.site.test"),
        lab.url("/post", "blog.site.test"),
        lab.url("/y", "other.test"),
    )
    narrow, _ = await lab.discover({})
    wide, _ = await lab.discover({"include_subdomains": True})
    assert lab.url("/x", "www.site.test") in _urls(narrow)
    assert lab.url("/post", "blog.site.test") not in _urls(narrow)
    assert lab.url("/post", "blog.site.test") in _urls(wide)
    assert not any("other.test" in url for url in _urls(wide))


async def test_limit_cuts_the_list_and_says_so(lab: Lab) -> None:
    many = [lab.url(f"/item/{index}") for index in range(50)]
    lab.site.add("/sitemap.xml", _urlset(*many), content_type="application/xml")
    short, _ = await lab.discover({"limit": 10})
    assert _urls(short) == many[:10] and short["truncated"] is True
    assert not any(hit.startswith("/item") for hit in lab.site.hits)  # the list was enough
    full, _ = await lab.discover({"limit": 100})
    assert set(many) <= set(_urls(full)) and full["truncated"] is False


async def test_a_cycle_of_links_ends_and_lists_each_page_once(lab: Lab) -> None:
    lab.page("/", "Home", "/a")
    lab.page("/a", "A", "/b", "/")
    lab.page("/b", "B", "/a", "/")
    output, _ = await lab.discover({})
    assert sorted(_urls(output)) == [lab.url("/"), lab.url("/a"), lab.url("/b")]
    pages = [hit for hit in lab.site.hits if not hit.endswith((".txt", ".xml"))]
    assert sorted(pages) == ["/", "/a", "/b"]


async def test_the_page_budget_bounds_the_crawl(lab: Lab) -> None:
    lab.page("/", "Home", *(f"/p{index}" for index in range(40)))
    for index in range(40):
        lab.page(f"/p{index}", f"P{index}")
    output, _ = await lab.discover({"limit": 100})  # a budget of 10 pages
    pages = [hit for hit in lab.site.hits if hit.startswith("/p")]
    assert len(pages) == 9 and output["truncated"] is True
    assert len(output["links"]) == 41


async def test_a_slow_site_is_cut_off_in_time_with_what_was_found(lab: Lab) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.8)
        return web.Response(text="<title>slow</title>", content_type="text/html")

    lab.page("/", "Home", *(f"/slow{index}" for index in range(9)))
    for index in range(9):
        lab.site.handle(f"/slow{index}", slow)
    settings = SETTINGS.replace(fetch_timeout_s=1.0, fetch_concurrency=1)
    started = asyncio.get_running_loop().time()
    output, _ = await lab.discover({}, settings)
    assert asyncio.get_running_loop().time() - started < 3.5
    assert output["truncated"] is True and len(output["links"]) == 10


async def test_search_filters_by_url_or_title(lab: Lab) -> None:
    lab.page("/", "Home", "/pricing", "/blog/launch")
    lab.page("/pricing", "Plans and prices")
    lab.page("/blog/launch", "We launched")
    output, _ = await lab.discover({"search": "PRIC"})
    assert _urls(output) == [lab.url("/pricing")]


async def test_robots_disallowed_pages_are_listed_but_not_fetched(lab: Lab) -> None:
    lab.site.add("/robots.txt", "User-agent: *\nDisallow: /private\n", content_type="text/plain")
    lab.page("/", "Home", "/private/report", "/public")
    lab.page("/public", "Public")
    output, _ = await lab.discover({})
    assert lab.url("/private/report") in _urls(output)
    assert "/private/report" not in lab.site.hits and "/public" in lab.site.hits


async def test_query_without_a_search_provider_says_how_to_configure_one(lab: Lab) -> None:
    with pytest.raises(errors.ProviderNotConfigured, match="LOOKOUT_SEARCH_URL"):
        await lab.discover({"query": "flood warnings"})


async def test_query_goes_to_searxng_even_with_private_networks_off(lab: Lab) -> None:
    asked: list[dict[str, str]] = []

    async def searxng(request: web.Request) -> web.Response:
        asked.append(dict(request.query))
        page = int(request.query["pageno"])
        results = [
            {
                "url": f"https://news.example/{page}-{n}",
                "title": f"Result {page}-{n}",
                "content": "About floods",
            }
            for n in range(3)
        ]
        results.append({"url": "javascript:alert(1)", "title": "junk"})
        return web.json_response(
            {"query": request.query["q"], "results": results if page <= 2 else []}
        )

    lab.site.handle("/search", searxng)
    settings = webpages.make_settings(allow_private=False, search_url=lab.url("/", "127.0.0.1"))
    output, _ = await lab.discover({"query": "flood warnings", "limit": 4}, settings)
    assert _urls(output) == [
        f"https://news.example/{p}-{n}" for p, n in ((1, 0), (1, 1), (1, 2), (2, 0))
    ]
    assert output["links"][0] == {
        "url": "https://news.example/1-0",
        "title": "Result 1-0",
        "snippet": "About floods",
    }
    assert output["truncated"] is True
    assert asked[0] == {"q": "site:site.test flood warnings", "format": "json", "pageno": "1"}
    assert len(asked) == 2  # stopped once it had more than the limit


async def test_a_failing_search_provider_is_an_upstream_error(lab: Lab) -> None:
    lab.site.add("/search", "forbidden", status=403, content_type="text/plain")
    settings = SETTINGS.replace(search_url=lab.url("", "127.0.0.1"))
    with pytest.raises(errors.UpstreamError, match="json format"):
        await lab.discover({"query": "x"}, settings)
    lab.site.add("/search", "not json", content_type="application/json")
    with pytest.raises(errors.UpstreamError, match="not JSON"):
        await lab.discover({"query": "x"}, settings)


async def test_a_site_that_cannot_be_reached_at_all_is_an_error_not_an_empty_list(
    lab: Lab,
) -> None:
    strict = webpages.make_settings(allow_private=False)
    with pytest.raises(errors.BlockedDestination):
        await lab.discover({}, strict)
    with pytest.raises(errors.FetchFailed, match="Could not resolve"):
        await lab.discover({"url": "http://unknown.test/"})
    assert lab.site.hits == []


async def test_a_missing_start_page_still_lists_what_the_sitemap_knows(lab: Lab) -> None:
    lab.site.add("/sitemap.xml", _urlset(lab.url("/kept")), content_type="application/xml")
    output, _ = await lab.discover({})
    assert _urls(output) == [lab.url("/kept")]


LONG = "<p>The council met on Tuesday and approved the budget for the coming year.</p>" * 40


@pytest.mark.usefixtures("fresh_readers")
async def test_a_large_page_is_read_in_a_reader_process_a_small_one_on_the_loop(lab: Lab) -> None:
    lab.page("/", "Home", "/small")
    lab.page("/small", "Small page")
    await lab.discover({})
    assert readers.current() is None  # pages under readers.INLINE_BYTES: read on the loop
    lab.page("/", "Home", "/small", "/large")
    lab.page("/large", "Large page", "/from-large", prose=LONG)
    assert len(lab.site.pages["/large"][0]) > readers.INLINE_BYTES
    # The crawl's budget (2 x fetch_timeout_s) covers starting the first reader: a forkserver
    # takes seconds to start on a loaded machine, so more room than SETTINGS' 4 s.
    output, _ = await lab.discover({}, SETTINGS.replace(fetch_timeout_s=15.0))
    titles = {link["url"]: link["title"] for link in output["links"]}
    assert titles[lab.url("/large")] == "Large page"
    assert titles[lab.url("/from-large")] == "Link to from-large"  # the large page's own links
    (snippet,) = [link["snippet"] for link in output["links"] if link["url"] == lab.url("/large")]
    assert snippet.startswith("The council met on Tuesday and approved the budget")
    pool = readers.current()
    assert pool is not None and pool.cpu_s() > 0  # the reader read it


@pytest.mark.usefixtures("fresh_readers")
async def test_a_page_not_read_in_time_is_left_out_and_the_crawl_goes_on(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "TIMEOUT_S", 0.000_001)
    lab.page("/", "Home", "/large", "/small")
    lab.page("/large", "Large page", "/behind-large", prose=LONG)
    lab.page("/small", "Small page", "/behind-small")
    output, _ = await lab.discover({})
    titles = {link["url"]: link["title"] for link in output["links"]}
    assert titles == {
        lab.url("/"): "Home",
        lab.url("/large"): "Link to large",  # fetched, not read: known by the link to it
        lab.url("/small"): "Small page",
        lab.url("/behind-small"): "Link to behind-small",
    }
    assert "/large" in lab.site.hits


async def test_a_start_page_not_read_is_the_error_when_nothing_else_is_found(lab: Lab) -> None:
    nested = "<div>" * 6000 + "<p>Deep.</p>" + "</div>" * 6000
    lab.site.add("/", f"<html><body>{nested}</body></html>")
    with pytest.raises(errors.FetchFailed) as raised:
        await lab.discover({})
    assert raised.value.message == (
        f"{lab.url('/')} was fetched but not read: the page nests elements more than 5000 deep. "
        "Lookout reads pages within a CPU budget; this one is built to exceed it."
    )


@pytest.mark.usefixtures("fresh_readers")
async def test_a_start_page_not_read_in_time_leaves_what_the_sitemap_knows(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "TIMEOUT_S", 0.000_001)
    lab.site.add("/sitemap.xml", _urlset(lab.url("/kept")), content_type="application/xml")
    lab.page("/", "Home", "/behind-home", prose=LONG)
    output, _ = await lab.discover({})
    assert _urls(output) == [lab.url("/kept")]
    lab.site.add("/sitemap.xml", "", status=404, content_type="text/plain")
    with pytest.raises(errors.FetchFailed, match="was fetched but not read: not read within"):
        await lab.discover({})
