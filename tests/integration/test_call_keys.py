"""Issue #22: a verb call's credits are keyed by the server, never by the client's request id.

The same X-Request-Id sent again runs again and is charged again, on every door (REST inline,
REST as a job, MCP tools/call, chat tools); once the balance is spent, every such call is 402
and runs nothing; what meta.credits_charged says is what the ledger holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from lookout import app, errors
from lookout.access import credits
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import sse, workers
from tests.integration.factories import Site, Tenant, TenantFactory, site, tenant_factory

__all__ = ["site", "tenant_factory"]

SHARED_ID = "shared-request-id-0001"


@pytest.fixture
def job_settings(settings: Settings) -> Settings:
    return settings.replace(job_wait_s=0.3)


@pytest.fixture
async def client(aiohttp_client: Any, job_settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(job_settings))


@pytest.fixture
def worker(job_settings: Settings) -> Iterator[None]:
    with workers.running_worker(job_settings, processes=1, threads=4):
        yield


def shared(tenant: Tenant) -> dict[str, str]:
    return {**tenant.headers, "X-Request-Id": SHARED_ID}


async def scrape(client: Any, tenant: Tenant, url: str, **extra: Any) -> tuple[int, Any]:
    body = {"url": url, **extra}
    response = await client.post("/v1/web/scrape", json=body, headers=shared(tenant))
    return response.status, await response.json()


async def reserves(db: asyncpg.Pool, workspace_id: uuid.UUID) -> list[str]:
    rows = await db.fetch(
        "SELECT request_id FROM credit_ledger WHERE workspace_id = $1 AND kind = 'reserve'",
        workspace_id,
    )
    return [row["request_id"] for row in rows]


async def assert_meta_is_the_ledger(
    db: asyncpg.Pool, tenant: Tenant, bodies: list[Any], granted: int
) -> None:
    """Each call's meta.credits_charged is what the ledger charged its call_id, and the
    balance is what was granted minus their sum."""
    for body in bodies:
        call_id = body["meta"]["call_id"]
        charge = await repo.get_charge(db, workspace_id=tenant.workspace.id, request_id=call_id)
        assert charge == body["meta"]["credits_charged"], body["meta"]
    spent = sum(body["meta"]["credits_charged"] for body in bodies)
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == granted - spent


async def test_rest_calls_sharing_a_request_id_each_run_and_are_each_charged(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a balance of 10
    tenant = await tenant_factory(credits=10)

    # When five calls send the same X-Request-Id
    answers = [await scrape(client, tenant, site.url("/same")) for _ in range(5)]

    # Then each ran and each was charged: five fetches, five reservations, 5 credits
    assert [status for status, _ in answers] == [200] * 5
    assert site.hits == {"/same": 5}
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 5
    bodies = [body for _, body in answers]
    assert {body["meta"]["request_id"] for body in bodies} == {SHARED_ID}
    assert len({body["meta"]["call_id"] for body in bodies}) == 5
    assert sorted(await reserves(db, tenant.workspace.id)) == sorted(
        body["meta"]["call_id"] for body in bodies
    )
    await assert_meta_is_the_ledger(db, tenant, bodies, granted=10)


async def test_rest_at_balance_zero_a_reused_request_id_is_402_and_runs_nothing(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a workspace whose last credit went to a call with this request id
    tenant = await tenant_factory(credits=1)
    status, first = await scrape(client, tenant, site.url("/paid"))
    assert status == 200, first

    # When the same id is sent again, inline and as a job
    inline = [await scrape(client, tenant, site.url("/free")) for _ in range(3)]
    job = {"async": True}
    queued = [await scrape(client, tenant, site.url("/free-job"), **job) for _ in range(3)]

    # Then every one is refused for credits, nothing is fetched and no job is stored
    for status, body in inline + queued:
        assert status == 402, body
        assert body["error"]["code"] == "insufficient_credits"
    assert site.hits == {"/paid": 1}
    assert await db.fetchval("SELECT count(*) FROM jobs WHERE workspace_id = $1",
                             tenant.workspace.id) == 0  # fmt: skip
    await assert_meta_is_the_ledger(db, tenant, [first], granted=1)


async def test_async_jobs_sharing_a_request_id_each_run_and_are_each_charged(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool, worker: None
) -> None:
    # Given a balance of 10 and a worker
    tenant = await tenant_factory(credits=10)

    # When three jobs are asked for with one X-Request-Id
    job = {"async": True}
    answers = [await scrape(client, tenant, site.url("/job"), **job) for _ in range(3)]
    assert all(status in (200, 202) for status, _ in answers), answers

    # Then there are three jobs, each with its own ledger key, all run and charged
    jobs = await db.fetch(
        "SELECT id, request_id FROM jobs WHERE workspace_id = $1", tenant.workspace.id
    )
    assert len({row["request_id"] for row in jobs}) == 3
    finished = [await finished_job(client, tenant, str(row["id"])) for row in jobs]
    assert [job["status"] for job in finished] == ["succeeded"] * 3
    assert site.hits == {"/job": 3}
    results = [job["result"] for job in finished]
    assert {r["meta"]["call_id"] for r in results} == {row["request_id"] for row in jobs}
    await assert_meta_is_the_ledger(db, tenant, results, granted=10)
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 7


async def finished_job(client: Any, tenant: Tenant, job_id: str) -> Any:
    for _ in range(300):
        response = await client.get(f"/v1/jobs/{job_id}", headers=tenant.headers)
        data = (await response.json())["data"]
        if data["status"] in ("succeeded", "failed", "cancelled"):
            return data
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


async def test_200_calls_at_once_with_one_request_id_cannot_overdraw(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a balance of 50 and 200 one-credit calls at once, all with one request id
    tenant = await tenant_factory(credits=50)

    async def call(i: int) -> int:
        response = await client.post(
            "/v1/web/scrape", json={"url": site.url(f"/r{i}")}, headers=shared(tenant)
        )
        await response.read()
        return int(response.status)

    statuses = await asyncio.gather(*(call(i) for i in range(200)))

    # Then exactly 50 ran (and were fetched), the rest were refused, the books balance at zero
    assert statuses.count(200) == 50
    assert statuses.count(402) == 150
    assert sum(site.hits.values()) == 50
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 0
    assert await repo.ledger_sum(db, workspace_id=tenant.workspace.id) == 0
    assert len(await reserves(db, tenant.workspace.id)) == 50


@contextlib.asynccontextmanager
async def mcp_session(url: str, tenant: Tenant) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {tenant.key}", "X-Request-Id": SHARED_ID}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_mcp_calls_sharing_a_request_id_each_run_then_402_at_zero(
    aiohttp_server: Any, settings: Settings, tenant_factory: TenantFactory, site: Site,
    db: asyncpg.Pool,
) -> None:  # fmt: skip
    # Given a balance of 3 and an MCP client whose every request carries one X-Request-Id
    tenant = await tenant_factory(credits=3)
    server = await aiohttp_server(app.create_app(settings))
    url = str(server.make_url("/mcp"))

    # When it calls web_scrape five times
    async with mcp_session(url, tenant) as session:
        results = [
            await session.call_tool("web_scrape", {"url": site.url("/mcp")}) for _ in range(5)
        ]

    # Then three ran and were charged, the last two were refused for credits and ran nothing
    assert [result.is_error for result in results] == [False] * 3 + [True] * 2
    metas = [result.meta["lookout/meta"] for result in results if result.meta]
    for meta in metas[3:]:
        assert meta["error"]["code"] == "insufficient_credits"
    assert site.hits == {"/mcp": 3}
    bodies = [{"meta": meta} for meta in metas[:3]]
    assert len({meta["call_id"] for meta in metas[:3]}) == 3
    await assert_meta_is_the_ledger(db, tenant, bodies, granted=3)


async def test_chat_tool_calls_of_turns_sharing_a_request_id_are_each_charged(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a balance of 2 and a chat
    tenant = await tenant_factory(credits=2)
    response = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat_id = (await response.json())["data"]["id"]
    base = str(client.make_url("")).rstrip("/")

    # When three turns, each sending the same X-Request-Id, ask to read a page
    outputs = []
    for _ in range(3):
        turn = await sse.stream(
            base, "POST", f"/api/chats/{chat_id}/messages", headers=shared(tenant),
            json_body={"text": f"what is on {site.url('/chat')} right now?"},
        )  # fmt: skip
        assert turn.status == 200
        outputs += [p["output"] for p in turn.parts if p["type"] == "tool-output-available"]

    # Then two were fetched and charged; the third was refused for credits and fetched nothing
    assert len(outputs) == 3
    assert "error" not in outputs[0] and "error" not in outputs[1]
    assert outputs[2]["error"]["code"] == "insufficient_credits"
    assert site.hits == {"/chat": 2}
    assert len(set(await reserves(db, tenant.workspace.id))) == 2
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 0
    assert await repo.ledger_sum(db, workspace_id=tenant.workspace.id) == 0


async def test_a_reservation_that_took_nothing_is_an_error_never_a_go_ahead(
    tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    # Given a ledger key that has reserved once
    tenant = await tenant_factory(credits=10)
    reserve = {"workspace_id": tenant.workspace.id, "request_id": "call_once", "amount": 2,
               "verb": "web.scrape", "actor": "test", "hold_s": 60}  # fmt: skip
    await credits.reserve(db, **reserve)

    # When it is used to reserve again, Then that is refused and nothing more is taken
    with pytest.raises(errors.Conflict):
        await credits.reserve(db, **reserve)
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 8
