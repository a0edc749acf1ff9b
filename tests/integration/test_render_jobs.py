"""Rendering through the doors: the web process hands a JavaScript shell to a real worker (a job),
and a screenshot comes back as a job artifact URL, readable by its own workspace only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from yarl import URL

from lookout import app
from lookout.settings import Settings
from tests.integration import test_render, webpages, workers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_rest_jobs import poll

__all__ = ["tenant_factory"]


@pytest.fixture
def job_settings(settings: Settings) -> Settings:
    return settings.replace(job_wait_s=0.3)


@pytest.fixture
def worker(job_settings: Settings, chromium: str) -> Iterator[None]:
    with workers.running_worker(job_settings, processes=1, threads=2):
        yield


chromium = test_render.chromium


@pytest.fixture
async def client(aiohttp_client: Any, job_settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(job_settings))


@pytest.fixture
async def shop_url(aiohttp_server: Any) -> str:
    site = webpages.Site()
    site.add("/shell", test_render.SHELL)
    site.add("/data.json", json.dumps(test_render.DATA), content_type="application/json")
    site.add("/tall", test_render.TALL)
    server = await aiohttp_server(site.app())
    return str(server.make_url(""))


async def _done(client: Any, response: Any, headers: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = await response.json()
    if response.status == 202:
        body = (await poll(client, response.headers["Location"], headers))["data"]["result"]
    assert body["ok"], body
    return body


async def test_a_shell_scraped_over_rest_is_rendered_by_a_worker(
    client: Any, tenant_factory: TenantFactory, shop_url: str, worker: None
) -> None:
    # Given a page that builds its content with JavaScript, and the default render: auto
    tenant = await tenant_factory(credits=10)
    # When it is scraped over REST (the web process has no browser)
    response = await client.post(
        "/v1/web/scrape", json={"url": shop_url + "/shell"}, headers=tenant.headers
    )
    body = await _done(client, response, tenant.headers)
    # Then a worker rendered it as a job, charged as a rendered page (priced for the shell)
    page = body["data"]["pages"][0]
    assert body["meta"]["job_id"] is not None
    assert page["rendered"] is True and "Lantern 3000" in page["markdown"]
    assert body["meta"]["credits_charged"] == 3


async def test_a_screenshot_is_a_job_artifact_of_its_workspace_only(
    client: Any, tenant_factory: TenantFactory, shop_url: str, worker: None
) -> None:
    tenant, other = await tenant_factory(credits=10), await tenant_factory(credits=10)
    response = await client.post(
        "/v1/web/scrape",
        json={"url": shop_url + "/tall", "formats": ["markdown", "screenshot"]},
        headers=tenant.headers,
    )
    body = await _done(client, response, tenant.headers)
    shot = body["data"]["pages"][0]["screenshot"]
    assert (shot["width"], shot["height"]) == (1280, 800)
    assert body["meta"]["credits_charged"] == 3  # a rendered page
    path = URL(shot["url"]).path
    png = await client.get(path, headers=tenant.headers)
    assert png.status == 200 and png.content_type == "image/png"
    assert (await png.read())[:8] == b"\x89PNG\r\n\x1a\n"
    # Another workspace, or no credentials, cannot read it
    assert (await client.get(path, headers=other.headers)).status == 404
    assert (await client.get(path)).status == 401
    # MCP and REST carry the URL, never the bytes
    assert "base64" not in json.dumps(body) and len(json.dumps(body)) < 20_000
