"""web.scrape in a real browser: Debian's chromium driven by Playwright, against local pages that
build their content with JavaScript, every request of the browser through our guarded proxy."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import json
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout.capabilities import browser, fetch, guard, registry, rendering, scrape
from lookout.schema import verbs
from lookout.settings import Settings
from tests.integration import webpages

NO_CHROMIUM = "Debian's chromium is not installed here (sudo apt-get install -y chromium)"
PUBLIC_STAND_IN = "127.0.0.2"  # a loopback address the guard is told to treat as public

SHELL = """<!doctype html><html><head><title>Lantern shop</title></head><body>
<div id="app"></div><noscript>You need to enable JavaScript to run this app.</noscript>
<script>
fetch('/data.json').then(r => r.json()).then(d => {
  document.getElementById('app').innerHTML =
    '<main><h1>' + d.name + '</h1><p>' + d.text + '</p></main>';
});
</script></body></html>"""
DATA = {
    "name": "Lantern 3000",
    "text": "The storm lantern is in stock at 59 euros and ships tomorrow from our warehouse.",
}
LATE = """<!doctype html><html><head><title>Late</title></head><body><div id="root"></div>
<script>setTimeout(() => { document.getElementById('root').innerHTML =
  '<article><h1>Arrived late</h1><p id="late-item">This paragraph was added after half a ' +
  'second by a timer, long after the load event fired.</p></article>'; }, 500);</script>
</body></html>"""
TALL = """<!doctype html><html><head><title>Tall</title><style>html,body,p{margin:0}</style></head>
<body><div style="height:2000px;background:#c33"><p>A tall red page of two thousand pixels.</p>
</div></body></html>"""


@pytest.fixture
def chromium() -> str:
    """Debian's chromium; skipped when absent locally, a failure in CI (which installs it)."""
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs it with apt-get")
        pytest.skip(NO_CHROMIUM)
    return path


def _options(**given: Any) -> dict[str, Any]:
    return registry.validate_input(registry.get("web.scrape"), {"url": "http://x.test", **given})


class Artifacts:
    """The job's artifact store, as the worker hands it to the verb (bytes kept here)."""

    def __init__(self) -> None:
        self.saved: list[bytes] = []

    async def __call__(self, content_type: str, body: bytes) -> dict[str, Any]:
        self.saved.append(body)
        expires = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
        return {"url": f"http://lookout.test/v1/jobs/j/artifacts/{len(self.saved)}",
                "expires_at": expires}  # fmt: skip


async def _scrape(
    url: str, settings: Settings, pool: browser.Pool | None, **given: Any
) -> dict[str, Any]:
    options = _options(**given) | {"urls": [url]}
    async with fetch.open_session(settings) as http:
        ctx = registry.VerbContext(
            http=http, settings=settings, progress=webpages.Recorder(), browser=pool,
            save_artifact=Artifacts(),
        )  # fmt: skip
        output = registry.dump_output(
            registry.get("web.scrape"), await scrape.execute(options, ctx)
        )
    page: dict[str, Any] = output["pages"][0]
    return page


@pytest.fixture
async def shop(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> webpages.Site:
    site = webpages.Site()
    site.add("/shell", SHELL)
    site.add("/data.json", json.dumps(DATA), content_type="application/json")
    site.add("/late", LATE)
    site.add("/tall", TALL)
    site.add(
        "/plain", webpages.article("Plain", "A plain page whose words are all in its HTML. " * 8)
    )
    site.server = await aiohttp_server(site.app())  # type: ignore[attr-defined]
    return site


def _url(site: webpages.Site, path: str) -> str:
    return str(site.server.make_url(path))  # type: ignore[attr-defined]


@pytest.fixture
async def pool(chromium: str) -> AsyncIterator[browser.Pool]:
    rendering_pool = browser.Pool(webpages.make_settings(browser_timeout_s=10.0))
    yield rendering_pool
    await rendering_pool.close()


async def test_plain_fetch_gets_the_shell_and_auto_renders_the_content(
    shop: webpages.Site, pool: browser.Pool
) -> None:
    settings = pool.settings
    plain = await _scrape(_url(shop, "/shell"), settings, pool, render="never")
    assert "Lantern 3000" not in (plain["markdown"] or "")
    assert plain["rendered"] is False
    auto = await _scrape(_url(shop, "/shell"), settings, pool)
    assert auto["error"] is None
    assert auto["rendered"] is True
    assert "Lantern 3000" in auto["markdown"] and "59 euros" in auto["markdown"]
    # The browser's own request for the JSON went through our proxy, not around it.
    assert "/data.json" in shop.hits and pool.proxy.served >= 2


async def test_auto_leaves_a_page_with_its_text_in_the_html_unrendered(
    shop: webpages.Site, pool: browser.Pool
) -> None:
    page = await _scrape(_url(shop, "/plain"), pool.settings, pool)
    assert page["rendered"] is False and "plain page" in page["markdown"]
    assert pool.proxy.served == 0  # chromium was never asked


async def test_wait_for_a_selector_that_appears_after_half_a_second(
    shop: webpages.Site, pool: browser.Pool
) -> None:
    page = await _scrape(_url(shop, "/late"), pool.settings, pool, wait_for="#late-item")
    assert page["error"] is None
    assert "added after half a second" in page["markdown"]


@pytest.mark.parametrize(("mode", "size"), [("viewport", (1280, 800)), ("full", (1280, 2000))])
async def test_a_screenshot_of_known_size(
    shop: webpages.Site, pool: browser.Pool, mode: str, size: tuple[int, int]
) -> None:
    page = await _scrape(_url(shop, "/tall"), pool.settings, pool, formats=["markdown",
                         "screenshot"], screenshot=mode)  # fmt: skip
    shot = page["screenshot"]
    assert (shot["width"], shot["height"]) == size
    assert shot["url"].startswith("http://lookout.test/v1/jobs/") and shot["bytes"] > 100
    assert page["rendered"] is True


async def test_a_page_that_never_stops_loading_hits_the_budget(
    aiohttp_server: Callable[..., Awaitable[TestServer]], chromium: str
) -> None:
    async def forever(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "image/png"})
        await response.prepare(request)
        await asyncio.sleep(8)  # past the 2 s budget; longer only holds the teardown
        return response

    site = webpages.Site()
    site.add("/", webpages.article("Slow", "An image that never ends. " * 10)
             .replace("</body>", '<img src="/forever"></body>'))  # fmt: skip
    site.handle("/forever", forever)
    server = await aiohttp_server(site.app())
    pool = browser.Pool(webpages.make_settings(browser_timeout_s=2.0))
    try:
        page = await _scrape(str(server.make_url("/")), pool.settings, pool, render="always")
    finally:
        await pool.close()
    assert page["error"]["code"] == "fetch_failed"
    assert "per-page budget" in page["error"]["message"]


async def test_the_web_process_hands_a_shell_to_a_worker(shop: webpages.Site) -> None:
    """No browser in this process (the web process): a shell raises NeedsWorker, so the adapter
    runs the call as a job; a page with its text in the HTML is read right here."""
    settings = webpages.make_settings()
    with pytest.raises(registry.NeedsWorker):
        await _scrape(_url(shop, "/shell"), settings, None)
    # Among other pages, the shell stops the call cleanly (no page left running).
    options = _options() | {
        "urls": [_url(shop, "/plain"), _url(shop, "/shell"), _url(shop, "/late")]
    }
    async with fetch.open_session(settings) as http:
        ctx = registry.VerbContext(http=http, settings=settings, progress=webpages.Recorder())
        with pytest.raises(registry.NeedsWorker):
            await scrape.execute(options, ctx)
    page = await _scrape(_url(shop, "/plain"), settings, None)
    assert page["rendered"] is False and page["error"] is None


async def test_chromium_missing_answers_provider_not_configured(shop: webpages.Site) -> None:
    settings = webpages.make_settings(browser_path="/nonexistent/chromium")
    pool = browser.Pool(settings)
    with pytest.raises(Exception) as caught:
        await _scrape(_url(shop, "/shell"), settings, pool, render="always")
    assert getattr(caught.value, "code", None) == "provider_not_configured"
    assert "apt-get install -y chromium" in str(caught.value)
    # auto degrades to the plain page when there is no browser to render it.
    page = await _scrape(_url(shop, "/shell"), settings, pool)
    assert page["rendered"] is False and page["error"] is None


def test_the_shell_heuristic() -> None:
    assert rendering.looks_like_shell(SHELL.encode())
    assert rendering.looks_like_shell(b'<body><div id="__next"></div><script>x()</script></body>')
    words = b"<p>" + b"Words people read. " * 30 + b"</p>"
    assert not rendering.looks_like_shell(b'<body><div id="root">' + words + b"</div></body>")
    assert not rendering.looks_like_shell(b"<body><p>short</p></body>")  # no app root: as is


def test_render_input_is_validated() -> None:
    verb = registry.get("web.scrape")
    for bad in ({"render": "sometimes"}, {"wait_for": 10_001}, {"wait_for": ""},
                {"wait_for": True}, {"screenshot": "huge"}, {"formats": ["pdf"]}):  # fmt: skip
        with pytest.raises(Exception) as caught:
            registry.validate_input(verb, {"url": "http://x.test", **bad})
        assert getattr(caught.value, "code", None) == "invalid_input", bad
    assert verb.max_units(_options(render="always")) == rendering.RENDERED_UNITS
    assert verb.max_units(_options()) == 1
    assert verb.is_slow(_options(formats=["screenshot"])) and not verb.is_slow(_options())
    assert verbs.MAX_WAIT_MS == 10_000


# -- the SSRF guard, from inside the browser ------------------------------------------------------

CANARY_PAGE = """<!doctype html><html><head><title>Canary</title></head><body>
<div id="app"></div>
<img src="http://127.0.0.1:{port}/img">
<img src="http://intranet.test:{port}/named-img">
<iframe src="/to?next=http://127.0.0.1:{port}/redirected"></iframe>
<script>
const tried = [];
const hit = (url) => fetch(url).then(() => tried.push('reached ' + url), () => tried.push('no'));
Promise.all([
  hit('http://127.0.0.1:{port}/xhr'),
  hit('http://169.254.169.254/latest/meta-data/'),
  hit('http://intranet.test:{port}/named'),
  hit('http://rebind.test:{port}/rebind'),
  hit('/to?next=http://127.0.0.1:{port}/fetch-redirect'),
  new Promise(done => {{ try {{ const ws = new WebSocket('ws://127.0.0.1:{port}/ws');
    ws.onopen = () => {{ tried.push('reached ws'); done(); }}; ws.onerror = () => done();
  }} catch (e) {{ done(); }} }}),
]).then(() => {{
  document.getElementById('app').innerHTML =
    '<main><h1>Rendered anyway</h1><p>The page rendered although its private requests ' +
    'were refused: ' + tried.join(', ') + '.</p></main>';
}});
</script></body></html>"""


async def test_private_destinations_are_refused_and_the_page_still_renders(
    aiohttp_server: Callable[..., Awaitable[TestServer]], chromium: str
) -> None:
    """The suite allows private networks for its page servers; this test does not. Private
    networks are OFF here, and the page is served on 127.0.0.2, which the guard's policy is told
    to treat as public (only a test can say so: `Policy.treat_as_public`). The canary listens on
    127.0.0.1, a loopback address the guard refuses, on another port. The page's script, images,
    iframe, a redirect and a WebSocket aim at the canary by address, by a name that resolves to
    it (intranet.test, through the proxy's resolver), by a name with a public and a private answer
    (rebind.test) and at the cloud metadata address; every one
    is refused by the proxy, none reaches the canary, and the page still renders."""
    canary = webpages.Site()
    canary_server = await aiohttp_server(canary.app())
    site = webpages.Site()
    site.add("/", CANARY_PAGE.format(port=canary_server.port))

    async def to_next(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["next"])

    site.handle("/to", to_next)
    server = await aiohttp_server(site.app(), host=PUBLIC_STAND_IN)
    strict = webpages.make_settings(allow_private=False, browser_timeout_s=15.0)
    policy = guard.Policy(treat_as_public=frozenset({ipaddress.ip_address(PUBLIC_STAND_IN)}))
    # rebind.test answers a public address and the canary's: every answer is checked, and the
    # proxy connects only to a checked one, so a second lookup can never aim it elsewhere.
    names = webpages.FakeResolver(
        {"intranet.test": ["127.0.0.1"], "rebind.test": ["93.184.216.34", "127.0.0.1"]}
    )
    pool = browser.Pool(strict, policy=policy, resolver=names)
    page_url = f"http://{PUBLIC_STAND_IN}:{server.port}/"
    try:
        async with fetch.open_session(strict, policy=policy) as http:
            ctx = registry.VerbContext(http=http, settings=strict, progress=webpages.Recorder(),
                                       browser=pool)  # fmt: skip
            options = _options(render="always", wait_for="main") | {"urls": [page_url]}
            output = await scrape.execute(options, ctx)
    finally:
        await pool.close()
    page = output["pages"][0]
    assert page["error"] is None, page["error"]
    assert "Rendered anyway" in page["markdown"]
    assert "reached" not in page["markdown"]
    assert canary.hits == []
    refused = " ".join(pool.proxy.refused)
    aimed = (f"127.0.0.1:{canary_server.port}", "169.254.169.254", "intranet.test", "rebind.test")
    for target in aimed:
        assert target in refused, (target, pool.proxy.refused)


async def test_the_proxy_refuses_connect_to_a_private_address(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> None:
    """CONNECT (https, WebSockets through a proxy) is checked like any request."""
    canary = webpages.Site()
    canary_server = await aiohttp_server(canary.app())
    strict = webpages.make_settings(allow_private=False)
    proxy = browser.browser_proxy.GuardedProxy(guard.Policy.from_settings(strict))
    url = await proxy.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
        writer.write(f"CONNECT 127.0.0.1:{canary_server.port} HTTP/1.1\r\n\r\n".encode())
        await writer.drain()
        answer = await reader.read(4096)
        writer.close()
        target = f"http://127.0.0.1:{canary_server.port}/"
        async with aiohttp.ClientSession() as session, session.get(target, proxy=url) as r:
            assert r.status == 403
    finally:
        await proxy.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"loopback" in answer
    assert canary.hits == []
