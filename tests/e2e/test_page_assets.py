"""How the web page is served: a strict CSP, a revalidated shell, long-cached versioned assets."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lookout import app
from lookout.settings import Settings


@pytest.fixture
async def client(aiohttp_client: Any, settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(settings))


def asset_paths(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/app/[^"]+)"', html)


async def test_the_shell_has_a_strict_csp_and_is_revalidated(client: Any) -> None:
    response = await client.get("/")
    html = await response.text()

    assert response.status == 200
    assert response.content_type == "text/html"
    csp = response.headers["Content-Security-Policy"]
    for rule in ("default-src 'none'", "script-src 'self'", "style-src 'self'",
                 "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"):  # fmt: skip
        assert rule in csp
    assert "unsafe-inline" not in csp
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    # No inline script or style: everything the page runs comes from /app/<version>/
    assert "<style" not in html and " style=" not in html
    assert re.findall(r"<script[^>]*>", html) == [
        f'<script type="module" src="{asset_paths(html)[1]}">'
    ]

    again = await client.get("/", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status == 304


async def test_assets_are_versioned_and_cached_for_a_year(client: Any) -> None:
    html = await (await client.get("/")).text()
    css, script = asset_paths(html)

    for path, kind in [(css, "text/css"), (script, "text/javascript")]:
        response = await client.get(path)
        assert response.status == 200, path
        assert response.content_type == kind
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    # Modules import each other relatively: every import resolves under the same version
    body = await (await client.get(script)).text()
    for module in re.findall(r'from "\./([\w.]+)"', body):
        assert (await client.get(script.rsplit("/", 1)[0] + "/" + module)).status == 200, module


async def test_an_old_version_is_served_but_not_cached_and_unknown_files_are_404(
    client: Any,
) -> None:
    stale = await client.get("/app/000000000000/js/main.js")
    missing = await client.get("/app/000000000000/js/nope.js")
    escape = await client.get("/app/000000000000/../../settings.py")

    assert stale.status == 200 and stale.headers["Cache-Control"] == "no-cache"
    assert missing.status == 404
    assert (await missing.json())["error"]["code"] == "not_found"
    assert escape.status == 404
