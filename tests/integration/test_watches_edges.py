"""Watch edges: a scheduled turn never starts a watch, running out of credits pauses it, roles."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.chat import events, turns
from lookout.db import repo
from lookout.settings import Settings
from lookout.watches import runner
from tests.integration import factories
from tests.integration.factories import Site, TenantFactory, member_cookie, site, tenant_factory
from tests.integration.test_watches import InProcess, answers, in_process, make_watch

__all__ = ["in_process", "site", "tenant_factory"]


async def queued_run(db: asyncpg.Pool, watch: repo.Automation) -> uuid.UUID:
    """A scheduled run of `watch`, due now, as the dispatcher queues it."""
    run_id = await repo.insert_run(
        db, automation_id=watch.id, workspace_id=watch.workspace_id,
        scheduled_for=dt.datetime.now(dt.UTC), manual=False,
    )  # fmt: skip
    assert run_id is not None
    return run_id


@pytest.fixture
def run_now(db: asyncpg.Pool, in_process: InProcess) -> Any:
    """run(watch) -> the final status of one scheduled run, executed in this process."""

    async def run(watch: repo.Automation) -> str:
        run_id = await queued_run(db, watch)
        return await runner.execute(in_process.services, in_process.graph, run_id)

    return run


async def test_a_scheduled_turn_never_starts_another_watch(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, site: Site, run_now: Any
) -> None:
    tenant = await tenant_factory(credits=10)
    watch = await make_watch(db, settings, tenant, site.url("/w"))
    await db.execute(
        "UPDATE automations SET action = jsonb_set(action, '{message}', to_jsonb($2::text))"
        " WHERE id = $1", watch.id, f"watch {site.url('/w')} every 5 minutes",
    )  # fmt: skip

    assert await run_now(watch) == "succeeded"
    rows = await db.fetch("SELECT id, trigger FROM automations")
    assert [(r["id"], r["trigger"]["cron"]) for r in rows] == [(watch.id, "0 * * * *")]


async def test_running_out_of_credits_pauses_the_watch_and_says_so(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, site: Site, run_now: Any
) -> None:
    tenant = await tenant_factory(credits=1)
    watch = await make_watch(db, settings, tenant, site.url("/paid"))

    assert await run_now(watch) == "succeeded"
    assert await run_now(watch) == "failed"

    after = await repo.get_automation(db, automation_id=watch.id, workspace_id=watch.workspace_id)
    said = await answers(db, watch.chat_id)
    assert after is not None and after.enabled is False
    assert "ran out of credits" in said[-1]
    runs = await db.fetch("SELECT status, error FROM automation_runs ORDER BY created_at")
    assert [r["status"] for r in runs] == ["succeeded", "failed"]
    assert "credits" in runs[1]["error"]


async def test_a_run_cut_off_before_its_turn_began_frees_the_chat_and_runs_again(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, site: Site,
    in_process: InProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    tenant = await tenant_factory(credits=10)
    watch = await make_watch(db, settings, tenant, site.url("/cut"))
    run_id = await queued_run(db, watch)

    async def shutdown_lands(*args: Any, **kwargs: Any) -> Any:
        raise asyncio.CancelledError  # after the claim took the chat's lease, before the turn

    monkeypatch.setattr(turns, "execute", shutdown_lands)
    with pytest.raises(asyncio.CancelledError):
        await runner.execute(in_process.services, in_process.graph, run_id)
    monkeypatch.undo()
    leased = await db.fetchval("SELECT ai_responding FROM chats WHERE id = $1", watch.chat_id)
    queued = await db.fetchval("SELECT status FROM automation_runs WHERE id = $1", run_id)

    again = await runner.execute(in_process.services, in_process.graph, run_id)

    assert (leased, queued) == (False, "queued")
    assert again == "succeeded"  # not skipped as "the chat was answering another message"


async def test_a_run_cut_off_while_its_end_is_stored_ends_its_stream_as_finished(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, site: Site,
    in_process: InProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    tenant = await tenant_factory(credits=10)
    watch = await make_watch(db, settings, tenant, site.url("/end"))
    run_id = await queued_run(db, watch)
    storing, release = asyncio.Event(), repo.release_chat_lease

    async def slow_release(*args: Any, **kwargs: Any) -> bool:
        if kwargs.get("run_end") is not None:  # the statement that also ends the run
            storing.set()
            await asyncio.sleep(0.3)  # still in flight when shutdown cancels the turn
        return await release(*args, **kwargs)

    monkeypatch.setattr(repo, "release_chat_lease", slow_release)
    running = asyncio.create_task(runner.execute(in_process.services, in_process.graph, run_id))
    await asyncio.wait_for(storing.wait(), 30)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    said = await events.range_after(in_process.services.redis, watch.chat_id, "0-0")
    status = await db.fetchval("SELECT status FROM automation_runs WHERE id = $1", run_id)
    assert status == "succeeded"  # ended by its own release; the cut requeued nothing
    assert said[-1][2]["type"] == "finish"  # not "Interrupted; retrying soon."


async def test_viewers_see_watches_but_cannot_create_run_or_stop_them(
    aiohttp_client: Any, db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory,
    site: Site,
) -> None:  # fmt: skip
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, site.url("/v"))
    client.session.cookie_jar.update_cookies(
        await member_cookie(db, settings, tenant, role="viewer")
    )
    origin = {"Origin": factories.page_origin(client)}
    body = {"chat_id": str(watch.chat_id), "message": "what is new", "cadence": "0 9 * * *"}

    listed = await client.get("/api/automations/watches", headers=origin)
    created = await client.post("/api/automations/watches", json=body, headers=origin)
    ran = await client.post(f"/api/automations/{watch.id}/run", headers=origin)
    stopped = await client.delete(f"/api/automations/{watch.id}", headers=origin)

    assert listed.status == 200 and len((await listed.json())["data"]["watches"]) == 1
    assert (created.status, ran.status, stopped.status) == (403, 403, 403)


async def test_a_run_of_a_stopped_watch_is_skipped_and_one_whose_chat_is_gone_fails(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, site: Site, run_now: Any
) -> None:
    # Given two watches: one stopped before its run, one whose chat row is gone
    tenant = await tenant_factory(credits=10)
    stopped = await make_watch(db, settings, tenant, site.url("/stopped"))
    orphan = await make_watch(db, settings, tenant, site.url("/orphan"))
    await repo.disable_automation(db, automation_id=stopped.id)
    await db.execute("DELETE FROM chats WHERE id = $1", orphan.chat_id)

    # When a run of each executes
    statuses = [await run_now(stopped), await run_now(orphan)]

    # Then the first is skipped; the second fails, says why, and its watch is disabled
    assert statuses == ["skipped", "failed"]
    runs = await db.fetch(
        "SELECT automation_id, error FROM automation_runs WHERE automation_id = ANY($1::uuid[])",
        [stopped.id, orphan.id],
    )
    errors = {r["automation_id"]: r["error"] for r in runs}
    assert errors == {
        stopped.id: "The watch was stopped before this run.",
        orphan.id: "The chat of this watch no longer exists.",
    }
    after = await repo.get_automation(db, automation_id=orphan.id, workspace_id=orphan.workspace_id)
    assert after is not None and after.enabled is False
