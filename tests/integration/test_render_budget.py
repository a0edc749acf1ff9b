"""The hard memory budget of a rendered page: memory the JavaScript heap cap never sees (canvas
bitmaps live in the renderer's native heap) still ends the page, as a per-page error, and the
browser goes on rendering other pages."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp.test_utils import TestServer

from lookout.capabilities import browser
from tests.integration import test_render, webpages

chromium = test_render.chromium

# Twelve 4096 x 4096 canvases, painted: ~64 MB of pixels each, ~770 MB in all, one every 50 ms,
# none of it JavaScript heap (the page's JS holds a dozen small objects).
CANVASES = """<!doctype html><html><head><title>Canvases</title></head><body><div id="root"></div>
<script>
const kept = [];
function grow(i) {
  if (i === 12) {
    document.getElementById('root').innerHTML = '<main id="done"><h1>All painted</h1><p>' +
      'Twelve canvases of four thousand pixels a side were painted and kept.</p></main>';
    return;
  }
  const c = document.createElement('canvas');
  c.width = 4096; c.height = 4096;
  const g = c.getContext('2d');
  g.fillStyle = 'rgb(' + (i * 20) + ', 80, 160)';
  g.fillRect(0, 0, 4096, 4096);
  g.getImageData(0, 0, 1, 1);
  kept.push(c);
  setTimeout(() => grow(i + 1), 50);
}
grow(0);
</script></body></html>"""


async def _site(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> TestServer:
    site = webpages.Site()
    site.add("/canvases", CANVASES)
    site.add("/shell", test_render.SHELL)
    site.add("/data.json", json.dumps(test_render.DATA), content_type="application/json")
    return await aiohttp_server(site.app())


async def test_a_page_past_the_memory_budget_answers_a_per_page_error(
    aiohttp_server: Callable[..., Awaitable[TestServer]], chromium: str
) -> None:
    server = await _site(aiohttp_server)
    # Given a renderer budget of 400 MB (the JavaScript heap cap stays at its 256 MB)
    settings = webpages.make_settings(browser_timeout_s=20.0, browser_memory_mb=400)
    pool = browser.Pool(settings)
    try:
        # When a page paints ~770 MB of canvases
        page = await test_render._scrape(
            str(server.make_url("/canvases")), settings, pool, render="always", wait_for="#done"
        )
        # Then that page answers a per-page error naming the memory budget
        assert page["error"] is not None, page
        assert page["error"]["code"] == "fetch_failed"
        assert "400 MB of memory" in page["error"]["message"], page["error"]
        assert pool.memory.kills >= 1
        # And the same browser still renders the next page
        after = await test_render._scrape(str(server.make_url("/shell")), settings, pool)
        assert after["error"] is None and after["rendered"] is True
        assert "Lantern 3000" in after["markdown"]
    finally:
        await pool.close()


async def test_the_same_page_renders_within_a_budget_it_fits(
    aiohttp_server: Callable[..., Awaitable[TestServer]], chromium: str
) -> None:
    """The control: only the memory budget stops the page above (not the heap cap, not time)."""
    server = await _site(aiohttp_server)
    settings = webpages.make_settings(browser_timeout_s=20.0, browser_memory_mb=4096)
    pool = browser.Pool(settings)
    try:
        page = await test_render._scrape(
            str(server.make_url("/canvases")), settings, pool, render="always", wait_for="#done"
        )
    finally:
        await pool.close()
    assert page["error"] is None, page["error"]
    assert "All painted" in page["markdown"]
    assert pool.memory.kills == 0
