"""Idempotency-Key on the REST door: the one client-chosen key. A replay returns the stored
answer and runs nothing; it belongs to the API key that sent it, and to one body."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.access import accounts
from lookout.db import repo
from lookout.settings import Settings
from tests.integration.factories import Site, Tenant, TenantFactory, site, tenant_factory

__all__ = ["site", "tenant_factory"]


@pytest.fixture
async def client(aiohttp_client: Any, settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(settings.replace(job_wait_s=0.2)))


def with_key(tenant: Tenant, key: str) -> dict[str, str]:
    return {**tenant.headers, "Idempotency-Key": key}


async def post(client: Any, headers: dict[str, str], body: dict[str, Any]) -> tuple[Any, Any]:
    response = await client.post("/v1/web/scrape", json=body, headers=headers)
    return response, await response.json()


async def reserves(db: asyncpg.Pool, tenant: Tenant) -> int:
    return int(await db.fetchval(
        "SELECT count(*) FROM credit_ledger WHERE workspace_id = $1 AND kind = 'reserve'",
        tenant.workspace.id,
    ))  # fmt: skip


async def test_a_replay_returns_the_stored_answer_and_runs_nothing(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a call made with an Idempotency-Key
    tenant = await tenant_factory(credits=10)
    headers = with_key(tenant, "order-7")
    first, first_body = await post(client, headers, {"url": site.url("/p")})
    assert first.status == 200, first_body

    # When it is sent again, twice, even with a different X-Request-Id
    again = [await post(client, {**headers, "X-Request-Id": f"retry-{n:04}"},
                        {"url": site.url("/p")}) for n in range(2)]  # fmt: skip

    # Then both get the first answer, marked replayed, and nothing ran or was charged again
    for response, body in again:
        assert response.status == 200
        assert response.headers["Idempotent-Replayed"] == "true"
        assert body == first_body
    assert site.hits == {"/p": 1}
    assert await reserves(db, tenant) == 1
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 9


async def test_a_replayed_job_is_the_same_job(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a call run as a job (no worker here: it stays queued) with an Idempotency-Key
    tenant = await tenant_factory(credits=10)
    headers = with_key(tenant, "job-1")
    body = {"url": site.url("/j"), "async": True}
    first, first_body = await post(client, headers, body)
    assert first.status == 202, first_body

    # When it is sent again
    again, again_body = await post(client, headers, body)

    # Then the answer names the same job, and no second job or reservation was made
    assert again.status == 202 and again_body == first_body
    assert (
        await db.fetchval("SELECT count(*) FROM jobs WHERE workspace_id = $1", tenant.workspace.id)
        == 1
    )
    assert await reserves(db, tenant) == 1


async def test_a_replay_while_the_first_still_runs_is_a_clear_conflict(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a slow call with an Idempotency-Key, still running
    tenant = await tenant_factory(credits=10)
    site.delay = 5.0  # the replay must come while the first call reads the page (a loaded machine)
    headers = with_key(tenant, "slow-1")
    body = {"url": site.url("/slow/a")}
    first = asyncio.create_task(post(client, headers, body))
    while not site.hits:
        await asyncio.sleep(0.02)

    # When the same request comes again meanwhile
    during, during_body = await post(client, headers, body)

    # Then it is told to retry shortly, and nothing ran twice
    assert during.status == 409, during_body
    assert during_body["error"]["code"] == "conflict"
    assert "still running" in during_body["error"]["message"]
    assert during.headers["Retry-After"] == "1"
    (done, done_body) = await first
    assert done.status == 200
    after, after_body = await post(client, headers, body)
    assert after.status == 200 and after_body == done_body
    assert site.hits == {"/slow/a": 1}
    assert await reserves(db, tenant) == 1


async def test_the_same_key_with_another_body_is_a_conflict(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory(credits=10)
    headers = with_key(tenant, "order-9")
    await post(client, headers, {"url": site.url("/one")})

    response, body = await post(client, headers, {"url": site.url("/two")})

    assert response.status == 409
    assert body["error"]["code"] == "conflict"
    assert "different request" in body["error"]["message"]
    assert site.hits == {"/one": 1}


async def test_a_key_belongs_to_the_api_key_that_sent_it(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given two API keys of one workspace, the first having used an Idempotency-Key
    tenant = await tenant_factory(credits=10)
    other = await accounts.create_key(db, workspace_id=tenant.workspace.id, name="other")
    body = {"url": site.url("/k")}
    mine, mine_body = await post(client, with_key(tenant, "shared-key"), body)
    assert mine.status == 200

    # When the second sends the same key and body
    headers = {"Authorization": f"Bearer {other.text}", "Idempotency-Key": "shared-key"}
    theirs, theirs_body = await post(client, headers, body)

    # Then it is a call of its own: run and charged, not the first key's answer
    assert theirs.status == 200
    assert "Idempotent-Replayed" not in theirs.headers
    assert theirs_body["meta"]["call_id"] != mine_body["meta"]["call_id"]
    assert site.hits == {"/k": 2}
    assert await reserves(db, tenant) == 2
