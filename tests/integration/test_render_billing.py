"""What a page rendered under `render: "auto"` costs: the rendered price (rendering.RENDERED_UNITS),
never rendered unpaid. Over REST with a real worker and Debian's chromium; every test reads the
workspace's balance and ledger before and after."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.access import metering
from lookout.capabilities import rendering
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import test_render, webpages, workers
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.integration.test_rest_jobs import poll

__all__ = ["tenant_factory"]

chromium = test_render.chromium
RENDERED = rendering.RENDERED_UNITS
PLAIN_TEXT = "A plain page whose words are all in its HTML, nothing for a browser to build. " * 4


@pytest.fixture
def job_settings(settings: Settings) -> Settings:
    return settings.replace(job_wait_s=0.3)


@pytest.fixture
def worker(job_settings: Settings, chromium: str) -> Iterator[None]:
    with workers.running_worker(job_settings, processes=1, threads=2):
        yield


@pytest.fixture
async def client(aiohttp_client: Any, job_settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(job_settings))


@pytest.fixture
async def site(aiohttp_server: Any) -> webpages.Site:
    shop = webpages.Site()
    shop.add("/shell", test_render.SHELL)
    shop.add("/data.json", json.dumps(test_render.DATA), content_type="application/json")
    shop.add("/plain", webpages.article("Plain", PLAIN_TEXT))
    shop.server = await aiohttp_server(shop.app())  # type: ignore[attr-defined]
    return shop


def _url(site: webpages.Site, path: str) -> str:
    return str(site.server.make_url(path))  # type: ignore[attr-defined]


async def _scrape(client: Any, tenant: Tenant, urls: list[str]) -> tuple[int, dict[str, Any]]:
    response = await client.post("/v1/web/scrape", json={"urls": urls}, headers=tenant.headers)
    body: dict[str, Any] = await response.json()
    if response.status == 202:
        body = (await poll(client, response.headers["Location"], tenant.headers))["data"]["result"]
    return response.status, body


async def _balance(db: asyncpg.Pool, tenant: Tenant) -> int:
    balance = await repo.get_balance(db, workspace_id=tenant.workspace.id)
    # The balance is the ledger's sum: nothing is taken or given back outside it.
    assert balance == await repo.ledger_sum(db, workspace_id=tenant.workspace.id)
    assert balance is not None
    return balance


async def _topups(db: asyncpg.Pool, tenant: Tenant) -> list[asyncpg.Record]:
    rows = await db.fetch(
        "SELECT request_id, kind, amount FROM credit_ledger WHERE workspace_id = $1 "
        "AND strpos(request_id, $2) > 0 ORDER BY id",
        tenant.workspace.id,
        metering.TOPUP_MARK,
    )
    return list(rows)


async def test_a_shell_under_auto_costs_the_rendered_price(
    db: asyncpg.Pool, client: Any, tenant_factory: TenantFactory, site: webpages.Site,
    worker: None,
) -> None:  # fmt: skip
    # Given a workspace with 10 credits and a page that builds its content with JavaScript
    tenant = await tenant_factory(credits=10)
    assert await _balance(db, tenant) == 10
    # When it is scraped with the default render: auto (the web process finds the shell)
    _, body = await _scrape(client, tenant, [_url(site, "/shell")])
    # Then a worker rendered it, and it cost a rendered page's price, not a plain one's
    assert body["ok"], body
    assert body["data"]["pages"][0]["rendered"] is True
    assert body["meta"]["credits_charged"] == RENDERED
    assert await _balance(db, tenant) == 10 - RENDERED
    # The job was priced for the shell up front: no top-up was needed
    assert await _topups(db, tenant) == []


async def test_a_worker_tops_up_before_rendering_a_shell_it_finds(
    db: asyncpg.Pool, client: Any, tenant_factory: TenantFactory, site: webpages.Site,
    worker: None,
) -> None:  # fmt: skip
    # Given six pages (a job from the start, reserved 1 credit each), one of them a shell
    tenant = await tenant_factory(credits=20)
    urls = [_url(site, f"/plain?n={n}") for n in range(5)] + [_url(site, "/shell")]
    # When they are scraped with render: auto
    _, body = await _scrape(client, tenant, urls)
    # Then the shell was rendered and charged the rendered price, the others 1 each
    assert body["ok"], body
    pages = body["data"]["pages"]
    assert [p["rendered"] for p in pages] == [False] * 5 + [True]
    assert "Lantern 3000" in pages[-1]["markdown"]
    assert body["meta"]["credits_charged"] == 5 + RENDERED
    assert await _balance(db, tenant) == 20 - 5 - RENDERED
    # The difference was reserved before rendering, and settled in full
    topups = [(r["kind"], r["amount"]) for r in await _topups(db, tenant)]
    assert topups == [("reserve", -(RENDERED - 1)), ("settle", 0)]
    # Usage counts one call of web.scrape with every credit it cost
    [usage] = await repo.usage_by_verb(db, workspace_id=tenant.workspace.id, days=1)
    assert (usage.verb, usage.calls, usage.credits) == ("web.scrape", 1, 5 + RENDERED)


async def test_a_balance_too_low_for_the_top_up_answers_that_page_with_insufficient_credits(
    db: asyncpg.Pool, client: Any, tenant_factory: TenantFactory, site: webpages.Site,
    worker: None,
) -> None:  # fmt: skip
    # Given six pages, one a shell, and 7 credits: the 6 reserved leave 1, the top-up needs 2
    tenant = await tenant_factory(credits=7)
    urls = [_url(site, f"/plain?n={n}") for n in range(5)] + [_url(site, "/shell")]
    _, body = await _scrape(client, tenant, urls)
    # Then the plain pages are read, the shell answers insufficient_credits and is not rendered
    assert body["ok"], body
    pages = body["data"]["pages"]
    assert all(p["error"] is None for p in pages[:5])
    assert pages[-1]["error"]["code"] == "insufficient_credits", pages[-1]
    assert "render" in pages[-1]["error"]["message"]
    assert "/data.json" not in site.hits  # the browser never ran its script
    # And only the plain pages were charged
    assert body["meta"]["credits_charged"] == 5
    assert await _balance(db, tenant) == 7 - 5
    assert await _topups(db, tenant) == []


async def test_a_balance_too_low_for_a_shell_found_by_the_web_process_refuses_the_call(
    db: asyncpg.Pool, client: Any, tenant_factory: TenantFactory, site: webpages.Site,
    worker: None,
) -> None:  # fmt: skip
    # Given one shell and fewer credits than a rendered page costs (a plain page's are there)
    tenant = await tenant_factory(credits=RENDERED - 1)
    status, body = await _scrape(client, tenant, [_url(site, "/shell")])
    # Then the call is refused as render: "always" would be, and nothing is taken
    assert status == 402 and body["error"]["code"] == "insufficient_credits", body
    assert "/data.json" not in site.hits
    assert await _balance(db, tenant) == RENDERED - 1
