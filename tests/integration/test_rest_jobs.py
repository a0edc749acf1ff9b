"""Slow verbs as jobs run by a real Dramatiq worker: 202, poll, result, cancel, expiry, recovery."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.access import job_runner
from lookout.access.services import Services
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import workers
from tests.integration.factories import Site, TenantFactory, site, tenant_factory

__all__ = ["site", "tenant_factory"]

SIX_PAGES = 6  # above web.scrape's inline budget of 5 pages: a job


@pytest.fixture
def job_settings(settings: Settings) -> Settings:
    return settings.replace(job_wait_s=0.3)


@pytest.fixture
def worker(job_settings: Settings) -> Iterator[None]:
    with workers.running_worker(job_settings, processes=1, threads=4):
        yield


@pytest.fixture
async def client(aiohttp_client: Any, job_settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(job_settings))


async def scrape_job(
    db: asyncpg.Pool, workspace_id: uuid.UUID, request_id: str, progress_total: int = 0
) -> repo.Job:
    """A web.scrape job row as the door writes it, for tests that drive it by hand."""
    return await repo.insert_job(
        db, workspace_id=workspace_id, request_id=request_id, verb="web.scrape",
        input={"url": "https://a.example"}, principal={}, door="rest",
        progress_total=progress_total, ttl_hours=24,
    )  # fmt: skip


async def poll(client: Any, location: str, headers: dict[str, str], seconds: float = 60) -> Any:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        body = await (await client.get(location, headers=headers)).json()
        if body["data"]["status"] in ("succeeded", "failed", "cancelled"):
            return body
        await asyncio.sleep(0.2)
    raise AssertionError(f"job still {body['data']['status']} after {seconds}s")


async def test_slow_scrape_answers_202_then_the_result(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool, worker: None
) -> None:
    # Given pages slow enough that the door's wait window passes
    tenant = await tenant_factory(credits=10)
    site.delay = 0.5
    urls = [site.url(f"/slow/{i}") for i in range(SIX_PAGES)]

    # When the call is made
    response = await client.post("/v1/web/scrape", json={"urls": urls}, headers=tenant.headers)
    body = await response.json()

    # Then it is accepted as a job, visible at once, and finishes with the pages, charged 6
    assert response.status == 202, body
    job_id = body["meta"]["job_id"]
    assert response.headers["Location"] == f"/v1/jobs/{job_id}"
    assert (await client.get(f"/v1/jobs/{job_id}", headers=tenant.headers)).status == 200
    done = await poll(client, f"/v1/jobs/{job_id}", tenant.headers)
    assert done["data"]["status"] == "succeeded"
    assert done["data"]["progress"] == {"done": SIX_PAGES, "total": SIX_PAGES}
    result = done["data"]["result"]
    assert result["ok"] is True and len(result["data"]["pages"]) == SIX_PAGES
    assert result["meta"]["credits_charged"] == SIX_PAGES
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10 - SIX_PAGES


async def test_async_flag_runs_a_fast_verb_as_a_job_and_returns_inline(
    client: Any, tenant_factory: TenantFactory, site: Site, worker: None, job_settings: Settings
) -> None:
    tenant = await tenant_factory(credits=10)

    response = await client.post(
        "/v1/web/scrape", json={"url": site.url("/quick"), "async": True}, headers=tenant.headers
    )
    body = await response.json()

    assert response.status in (200, 202)
    assert body["meta"]["job_id"]
    if response.status == 202:
        body = (await poll(client, f"/v1/jobs/{body['meta']['job_id']}", tenant.headers))["data"][
            "result"
        ]
    assert body["data"]["pages"][0]["title"] == "quick"


async def test_cancel_stops_a_running_job_and_refunds(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool, worker: None
) -> None:
    tenant = await tenant_factory(credits=10)
    site.delay = 2.0
    urls = [site.url(f"/slow/c{i}") for i in range(SIX_PAGES)]
    body = await (
        await client.post("/v1/web/scrape", json={"urls": urls}, headers=tenant.headers)
    ).json()
    job_id = body["meta"]["job_id"]

    cancel = await client.delete(f"/v1/jobs/{job_id}", headers=tenant.headers)
    done = await poll(client, f"/v1/jobs/{job_id}", tenant.headers)

    assert cancel.status == 200
    assert done["data"]["status"] == "cancelled"
    assert done["data"]["result"]["error"]["code"] == "conflict"
    assert sum(site.hits.values()) < SIX_PAGES
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10


async def test_another_workspaces_job_is_not_found(
    client: Any, tenant_factory: TenantFactory, site: Site, worker: None
) -> None:
    owner = await tenant_factory()
    stranger = await tenant_factory()
    body = await (
        await client.post(
            "/v1/web/scrape", json={"url": site.url("/x"), "async": True}, headers=owner.headers
        )
    ).json()

    peek = await client.get(f"/v1/jobs/{body['meta']['job_id']}", headers=stranger.headers)
    cancel = await client.delete(f"/v1/jobs/{body['meta']['job_id']}", headers=stranger.headers)
    garbage = await client.get("/v1/jobs/not-a-uuid", headers=stranger.headers)

    assert (peek.status, cancel.status, garbage.status) == (404, 404, 404)
    assert (await peek.json())["error"]["code"] == "not_found"


async def test_an_expired_job_says_its_result_expired(
    client: Any, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory()
    job = await scrape_job(db, tenant.workspace.id, "r1")
    await db.execute(
        "UPDATE jobs SET expires_at = now() - interval '1 minute' WHERE id = $1", job.id
    )

    response = await client.get(f"/v1/jobs/{job.id}", headers=tenant.headers)

    body = await response.json()
    assert response.status == 404
    assert "expired" in body["error"]["message"]
    assert "24 hours" in body["error"]["message"]


async def test_a_job_whose_worker_died_is_requeued_then_failed_and_refunded(
    tenant_factory: TenantFactory, db: asyncpg.Pool, settings: Settings
) -> None:
    # Given a job reserved and claimed by a worker that then vanished (its lease ran out)
    from lookout.access import credits

    tenant = await tenant_factory(credits=10)
    await credits.reserve(
        db, workspace_id=tenant.workspace.id, request_id="lost-1", amount=3,
        verb="web.scrape", actor="test", hold_s=3600,
    )  # fmt: skip
    job = await scrape_job(db, tenant.workspace.id, "lost-1")
    services = Services(db=db, redis=None, http=None, settings=settings)  # type: ignore[arg-type]

    async def die_while_running() -> None:
        assert await repo.claim_job(db, job_id=job.id, lease_s=60)
        await db.execute(
            "UPDATE jobs SET lease_until = now() - interval '1 s' WHERE id = $1", job.id
        )

    # When the sweeper finds it: the first two times it is requeued for another attempt
    for _ in range(2):
        await die_while_running()
        assert await job_runner.recover_lost(services) == [job.id]
    await die_while_running()
    assert await job_runner.recover_lost(services) == []

    # Then after the third lost attempt it is failed, never left running, and refunded
    final = await repo.get_job_for_worker(db, job_id=job.id)
    assert final is not None and final.status == "failed"
    assert final.error is not None and final.error["code"] == "unavailable"
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10


async def test_progress_reports_arriving_out_of_order_never_go_back(
    tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    # Given a running job whose pages finish together: "6 of 6" commits before "1 of 6"
    tenant = await tenant_factory()
    job = await scrape_job(db, tenant.workspace.id, "order-1", progress_total=6)
    assert await repo.claim_job(db, job_id=job.id, lease_s=60)
    for done in (6, 1):
        await repo.job_progress(db, job_id=job.id, done=done, total=6, lease_s=60)

    # Then the job still reads 6 of 6 (a full run of the suite saw "1 of 6" on a finished job)
    final = await repo.get_job_for_worker(db, job_id=job.id)
    assert final is not None and (final.progress_done, final.progress_total) == (6, 6)


async def test_stale_reservations_are_released(
    tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    from lookout.access import credits

    tenant = await tenant_factory(credits=10)
    await credits.reserve(
        db, workspace_id=tenant.workspace.id, request_id=str(uuid.uuid4()), amount=4,
        verb="web.scrape", actor="test", hold_s=-1,
    )  # fmt: skip
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 6

    assert await credits.release_stale(db) == 1
    assert await credits.release_stale(db) == 0
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10


async def test_the_stale_reservation_sweep_reads_from_its_mark_on(
    tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    from lookout.access import credits

    tenant = await tenant_factory(credits=10)

    async def reserve(hold_s: float) -> None:
        await credits.reserve(
            db, workspace_id=tenant.workspace.id, request_id=str(uuid.uuid4()), amount=1,
            verb="web.scrape", actor="test", hold_s=hold_s,
        )  # fmt: skip

    # Given a pass that refunded all it found: its mark is 10 minutes before it
    sweep = credits.StaleSweep()
    await reserve(hold_s=-1)
    assert await credits.release_stale(db, sweep) == 1
    assert sweep.mark > dt.datetime.now(dt.UTC) - dt.timedelta(minutes=11)

    # When a reservation turns up with a deadline before the mark (a clock an hour behind)
    await reserve(hold_s=-3600)
    await reserve(hold_s=-1)

    # Then the process's next pass does not read back that far; a new process's first does
    assert await credits.release_stale(db, sweep) == 1
    assert await credits.release_stale(db, credits.StaleSweep()) == 1
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10


async def test_a_full_stale_pass_moves_the_mark_only_to_where_it_stopped(
    tenant_factory: TenantFactory, db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout.access import credits

    monkeypatch.setattr(credits, "STALE_BATCH", 2)
    tenant = await tenant_factory(credits=10)
    for hold_s in (-300, -200, -100):  # three stale reservations, oldest first
        await credits.reserve(
            db, workspace_id=tenant.workspace.id, request_id=str(uuid.uuid4()), amount=1,
            verb="web.scrape", actor="test", hold_s=hold_s,
        )  # fmt: skip
    sweep = credits.StaleSweep()

    deadlines = await db.fetch(
        "SELECT deadline FROM credit_ledger WHERE workspace_id = $1 AND kind = 'reserve'"
        " ORDER BY deadline",
        tenant.workspace.id,
    )

    assert await credits.release_stale(db, sweep) == 2
    assert sweep.mark == deadlines[1]["deadline"]
    assert await credits.release_stale(db, sweep) == 1
    assert await credits.release_stale(db, sweep) == 0
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10
