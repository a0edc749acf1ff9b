"""Rendering pages in Debian's chromium, driven by Playwright for Python (no browser downloads).

One `Pool` per worker process: one Chromium, launched on first use, behind its own
`browser_proxy.GuardedProxy` (every request the browser makes goes through the SSRF guard), at
most LOOKOUT_BROWSER_PAGES pages at a time, each in a fresh context (no storage shared or kept,
downloads refused, service workers blocked, dialogs dismissed), each within a time budget
(LOOKOUT_BROWSER_TIMEOUT_S), a JavaScript heap cap (LOOKOUT_BROWSER_JS_HEAP_MB, per renderer) and
a hard memory budget (LOOKOUT_BROWSER_MEMORY_MB of resident memory per renderer, whatever spends
it: canvases, DOM, images; browser_memory.py kills a renderer past it, its page answers an error).
The web process never has a Pool: a call that needs a browser runs as a job in a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import shutil
import time
from typing import TYPE_CHECKING, Any

from aiohttp import abc

from lookout import errors
from lookout.capabilities import browser_memory, browser_proxy, guard
from lookout.settings import Settings

if TYPE_CHECKING:  # Playwright is imported by the first render only (the web process never does)
    from playwright.async_api import Browser, Page, Playwright

logger = logging.getLogger(__name__)

INSTALL = "apt-get install -y chromium"
VIEWPORT = {"width": 1280, "height": 800}
# A full-page screenshot taller than this is cut there (a page can be built to be endless).
MAX_SCREENSHOT_HEIGHT = 8000
MAX_WAIT_MS = 10_000
# After the load event, how long to wait for the network to go quiet (the page's own XHRs).
_SETTLE_MS = 3000
_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--no-pings",
    # WebRTC must not open UDP of its own around the proxy.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    # Loopback is not bypassed: 127.0.0.1 goes through the guard like any other address.
    "--proxy-bypass-list=<-loopback>",
)


@dataclasses.dataclass(frozen=True)
class Rendered:
    url: str
    final_url: str
    status: int | None
    html: str
    screenshot: bytes | None = None


def executable(settings: Settings) -> str | None:
    """The chromium to drive, or None when it is not installed (or LOOKOUT_BROWSER=off)."""
    if settings.browser == "off":
        return None
    return shutil.which(settings.browser_path or "chromium")


def not_configured(settings: Settings) -> errors.ProviderNotConfigured:
    if settings.browser == "off":
        why = "rendering is turned off (LOOKOUT_BROWSER=off); set LOOKOUT_BROWSER=auto"
    else:
        why = f"chromium is not installed on the workers; install it with `{INSTALL}`"
    return errors.ProviderNotConfigured(
        f"This page needs a browser to render it, but {why}.", install=INSTALL
    )


class Pool:
    """A worker process's browser: launched lazily, closed with the process."""

    def __init__(
        self,
        settings: Settings,
        *,
        policy: guard.Policy | None = None,
        resolver: abc.AbstractResolver | None = None,
    ) -> None:
        self.settings = settings
        self.proxy = browser_proxy.GuardedProxy(
            policy or guard.Policy.from_settings(settings),
            resolver=resolver,
            connect_timeout_s=settings.fetch_connect_timeout_s,
        )
        self.memory = browser_memory.Watchdog(settings.browser_memory_mb)
        self._gate = asyncio.Semaphore(max(1, settings.browser_pages))
        self._lock = asyncio.Lock()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._proxy_url: str | None = None

    @property
    def available(self) -> bool:
        return executable(self.settings) is not None

    async def _launched(self) -> Browser:
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            path = executable(self.settings)
            if path is None:
                raise not_configured(self.settings)
            if self._proxy_url is None:
                self._proxy_url = await self.proxy.start()
            if self._playwright is None:
                from playwright import async_api

                self._playwright = await async_api.async_playwright().start()
            heap = f"--js-flags=--max-old-space-size={self.settings.browser_js_heap_mb}"
            self._browser = await self._playwright.chromium.launch(
                executable_path=path,
                args=[*_ARGS, f"--proxy-server={self._proxy_url}", heap],
            )
            return self._browser

    async def close(self) -> None:
        # Under the launch lock: a render launching meanwhile would find the browser closing,
        # launch another and have Playwright stopped under it (or leak a Chromium).
        async with self._lock:
            if self._browser is not None:
                await self._browser.close()
            if self._playwright is not None:
                await self._playwright.stop()
            await self.proxy.close()
            self._browser, self._playwright, self._proxy_url = None, None, None

    async def render(
        self, url: str, *, wait_for: str | int | None = None, screenshot: str | None = None
    ) -> Rendered:
        """`url` loaded and its scripts run; `screenshot` is "full" or "viewport" (PNG).
        Raises FetchFailed (budget, load failure) or ProviderNotConfigured."""
        from playwright import async_api

        budget = self.settings.browser_timeout_s
        async with self._gate:
            browser = await self._launched()
            context = await browser.new_context(
                accept_downloads=False,
                service_workers="block",
                viewport=VIEWPORT,  # type: ignore[arg-type]
                user_agent=self.settings.user_agent,
            )
            started, crashed = time.monotonic(), asyncio.Event()
            watcher = asyncio.ensure_future(self._watch_memory())
            try:
                async with asyncio.timeout(budget):
                    page = await context.new_page()
                    page.on("dialog", _dismiss)
                    page.on("crash", lambda _: crashed.set())
                    return await _load(page, url, wait_for, screenshot, self.settings)
            except (TimeoutError, async_api.Error) as exc:
                raise self._failure(url, exc, crashed.is_set(), started) from None
            finally:
                watcher.cancel()
                await _close_quietly(context)

    async def _watch_memory(self) -> None:
        while True:
            await asyncio.sleep(browser_memory.POLL_S)
            await asyncio.to_thread(self.memory.sweep)

    def _failure(
        self, url: str, exc: BaseException, crashed: bool, started: float
    ) -> errors.FetchFailed:
        """The per-page error of a render that failed: memory, time, or the browser's own."""
        if crashed and self.memory.killed_since(started):
            limit = self.settings.browser_memory_mb
            why = f"{url} used more than {limit} MB of memory rendering, the per-page budget"
            return _failed(url, "memory", why)
        if isinstance(exc, TimeoutError):
            budget = self.settings.browser_timeout_s
            why = f"{url} did not finish rendering within {budget:g} s, the per-page budget"
            return _failed(url, "timeout", why)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _failed(url, "render", f"{url} could not be rendered: {first}")


async def _load(
    page: Page, url: str, wait_for: str | int | None, screenshot: str | None, settings: Settings
) -> Rendered:
    from playwright import async_api

    response = await page.goto(url, wait_until="load", timeout=0)
    # A page that keeps polling never goes quiet; it still renders what it has.
    with contextlib.suppress(async_api.Error):
        await page.wait_for_load_state("networkidle", timeout=_SETTLE_MS)
    if isinstance(wait_for, int):
        await page.wait_for_timeout(min(wait_for, MAX_WAIT_MS))
    elif wait_for:
        await page.wait_for_selector(wait_for, state="attached", timeout=0)
    html = await page.content()
    if len(html.encode()) > settings.fetch_max_bytes:
        raise _failed(url, "too_large", f"{url} rendered to more than the size limit")
    shot = await _screenshot(page, screenshot, url, settings) if screenshot else None
    return Rendered(
        url=url,
        final_url=page.url,
        status=response.status if response is not None else None,
        html=html,
        screenshot=shot,
    )


async def _screenshot(page: Page, mode: str, url: str, settings: Settings) -> bytes:
    options: dict[str, Any] = {"type": "png"}
    if mode == "full":
        height = await page.evaluate("document.documentElement.scrollHeight")
        width = VIEWPORT["width"]
        clip_height = max(1, min(int(height), MAX_SCREENSHOT_HEIGHT))
        options |= {"full_page": True, "clip": {"x": 0, "y": 0, "width": width,
                                                "height": clip_height}}  # fmt: skip
    shot = await page.screenshot(**options)
    if len(shot) > settings.browser_screenshot_max_bytes:
        limit = settings.browser_screenshot_max_bytes
        raise _failed(url, "too_large", f"the screenshot of {url} is over {limit} bytes")
    return shot


async def _dismiss(dialog: Any) -> None:
    await dialog.dismiss()


async def _close_quietly(context: Any) -> None:
    from playwright import async_api

    try:
        await context.close()
    except async_api.Error:
        logger.warning("a browser context did not close cleanly")


def _failed(url: str, reason: str, message: str) -> errors.FetchFailed:
    return errors.FetchFailed(message, url=url, reason=reason)
