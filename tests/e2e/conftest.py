"""Browser tests: Debian's headless Chromium, driven by Playwright, against the real service (web
app on a free port, Postgres, Redis and a real `lookout worker`).

Screenshots of the main states go to tests/e2e/output/<test name>/ (not checked in)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from playwright.async_api import Browser, Locator, Page, async_playwright

from lookout import app, devservices
from lookout.settings import Settings
from tests.integration import workers

OUTPUT = Path(__file__).parent / "output"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse battery staple"


NO_CHROMIUM = "Debian's chromium is not installed here"
ENABLE = "sudo apt-get install -y chromium"
_skipped_for_chromium: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and NO_CHROMIUM in str(report.longrepr):
        _skipped_for_chromium.append(report.nodeid)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's very last line, after pytest's summary: what was not tested, and the fix."""
    if _skipped_for_chromium:
        count = len(set(_skipped_for_chromium))
        print(f"{count} browser test(s) skipped: chromium is missing; `{ENABLE}` enables them")


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium; skipped when absent locally, a failure in CI (which installs it)."""
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs it with apt-get")
        pytest.skip(f"{NO_CHROMIUM} ({ENABLE})")
    return path


@pytest.fixture
def proxy_port() -> int:
    """The port `line`'s proxy listens on: its origin is one of the app's allowed origins."""
    return devservices.free_port()


async def serve(aiohttp_server: Any, settings: Settings, *origins: str) -> str:
    """The whole web process on a free local port, configured with that URL as its
    LOOKOUT_PUBLIC_URL (and `origins` as more of its own): its URL."""
    port = devservices.free_port()
    configured = settings.replace(public_url=f"http://127.0.0.1:{port}", allowed_origins=origins)
    server = await aiohttp_server(app.create_app(configured), port=port)
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def lookout_url(settings: Settings, aiohttp_server: Any, proxy_port: int) -> str:
    """The whole web process (page, API, SSE), reached directly or through `line`'s proxy
    (stopped before its database is dropped: `settings` comes first)."""
    return await serve(aiohttp_server, settings, f"http://127.0.0.1:{proxy_port}")


class Line:
    """A TCP proxy in front of the web process: cut() is a network drop (every open connection
    reset, new ones refused) until mend()."""

    def __init__(self, target: str) -> None:
        self.host, port = target.split("//", 1)[1].rsplit(":", 1)
        self.target_port = int(port)
        self.down = False
        self.open: set[asyncio.StreamWriter] = set()
        self.server: asyncio.Server | None = None

    async def start(self, port: int = 0) -> str:
        self.server = await asyncio.start_server(self._serve, self.host, port)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://{self.host}:{port}"

    async def stop(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    def cut(self) -> None:
        self.down = True
        for writer in list(self.open):
            writer.transport.abort()
        self.open.clear()

    def mend(self) -> None:
        self.down = False

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        self.open.update({writer, up_writer})
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
        )

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while chunk := await source.read(65536):
                sink.write(chunk)
                await sink.drain()
        finally:
            self.open.discard(sink)
            sink.transport.abort()


@pytest.fixture
async def line(lookout_url: str, proxy_port: int) -> AsyncIterator[tuple[Line, str]]:
    """(the proxy, the URL of the web process through it)."""
    proxy = Line(lookout_url)
    url = await proxy.start(proxy_port)
    yield proxy, url
    await proxy.stop()


@pytest.fixture
def worker(settings: Settings) -> Iterator[Path]:
    with workers.running_worker(settings, threads=2) as log:
        yield log


@dataclasses.dataclass
class Bakery:
    """A local page whose content the test changes; `delay` slows every answer."""

    url: str
    lines: list[str]
    delay: float = 0.0


@pytest.fixture
async def bakery(aiohttp_server: Any) -> Bakery:
    holder: dict[str, Bakery] = {}

    async def page(request: web.Request) -> web.Response:
        site = holder["site"]
        await asyncio.sleep(site.delay)
        items = "".join(f"<li>{line}</li>" for line in site.lines)
        html = (
            "<!doctype html><html><head><title>Corner Bakery opening hours</title></head><body>"
            "<main><h1>Corner Bakery</h1><p>Fresh bread on Baker Street since 1998. "
            "Everything is baked on the premises every morning.</p>"
            f"<h2>This week</h2><ul>{items}</ul></main></body></html>"
        )
        return web.Response(text=html, content_type="text/html")

    site_app = web.Application()
    site_app.router.add_get("/hours", page)
    server = await aiohttp_server(site_app)
    holder["site"] = Bakery(
        url=str(server.make_url("/hours")),
        lines=["Monday to Friday: open from early morning", "Seasonal: pumpkin loaf"],
    )
    return holder["site"]


@pytest.fixture
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium, args=BROWSER_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            await launched.close()


@dataclasses.dataclass
class Tab:
    """A page plus what a person would notice going wrong: script errors, CSP violations."""

    page: Page
    shots: Path
    errors: list[str]

    async def shot(self, name: str) -> None:
        await self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=False)


async def open_tab(browser: Browser, shots: Path, viewport: dict[str, int]) -> Tab:
    context = await browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = await context.new_page()
    page.set_default_timeout(20_000)
    tab = Tab(page=page, shots=shots, errors=[])
    page.on("pageerror", lambda error: tab.errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            tab.errors.append(f"console: {message.text}")
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    return tab


@pytest.fixture
def shots_dir(request: pytest.FixtureRequest) -> Path:
    folder = OUTPUT / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
async def desktop(browser: Browser, shots_dir: Path) -> AsyncIterator[Tab]:
    tab = await open_tab(browser, shots_dir, DESKTOP)
    yield tab
    await tab.page.context.close()


@pytest.fixture
async def phone(browser: Browser, shots_dir: Path) -> AsyncIterator[Tab]:
    tab = await open_tab(browser, shots_dir, PHONE)
    yield tab
    await tab.page.context.close()


async def record_texts(element: Locator) -> None:
    """Record every text `element` takes from now on (read with `recorded_texts`): a notice that
    comes and goes within milliseconds is missed by polling it."""
    await element.evaluate(
        "el => { window.saidTexts = []; new MutationObserver(() => "
        "window.saidTexts.push(el.textContent)).observe(el, {childList: true, subtree: true, "
        "characterData: true}); }"
    )


async def recorded_texts(page: Page) -> list[str]:
    texts: list[str] = await page.evaluate("window.saidTexts")
    return texts
