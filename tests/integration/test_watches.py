"""Keep watching: the watch service, the dispatcher, scheduled turns by a real worker."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
import itertools
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from lookout import app, broker
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.agent import graph, pruning
from lookout.chat import lease
from lookout.db import checkpointer, repo
from lookout.settings import Settings
from lookout.watches import dispatch, runner, service
from tests.integration import sse, workers
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.reliability import faults_watches

__all__ = ["tenant_factory"]


@pytest.fixture
async def page(aiohttp_server: Any) -> dict[str, Any]:
    """A local page whose lines the test edits between runs."""
    state: dict[str, Any] = {"lines": ["Soup of the day", "Fresh bread"]}

    async def handle(request: web.Request) -> web.Response:
        items = "".join(f"<li>{line}</li>" for line in state["lines"])
        # A clock in the page's header, outside its main content: chrome, not a change.
        clock = f"<header><p>Updated {dt.datetime.now(dt.UTC):%H:%M:%S}</p></header>"
        html = f"<html><head><title>Menu</title></head><body>{clock}<main><h1>Menu</h1>"
        html += f"<ul>{items}</ul></main></body></html>"
        return web.Response(text=html, content_type="text/html")

    server_app = web.Application()
    server_app.router.add_get("/menu", handle)
    server = await aiohttp_server(server_app)
    state["url"] = str(server.make_url("/menu"))
    return state


def owner(tenant: Tenant) -> Principal:
    return Principal(
        kind="session", workspace_id=tenant.workspace.id, role="owner", user_id=tenant.user.id
    )


async def make_watch(
    db: asyncpg.Pool, settings: Settings, tenant: Tenant, url: str, cron: str = "0 * * * *"
) -> repo.Automation:
    chat = await repo.insert_chat(
        db, workspace_id=tenant.workspace.id, created_by=tenant.user.id, title="menu"
    )
    return await service.create(
        db, settings, owner(tenant), chat=chat, message=f"what is on {url}", cadence=cron
    )


async def make_due(db: asyncpg.Pool, automation_id: uuid.UUID, ago: str = "1 second") -> None:
    await db.execute(
        f"UPDATE automations SET next_run_at = now() - interval '{ago}' WHERE id = $1",
        automation_id,
    )


async def wait_run(
    db: asyncpg.Pool, automation_id: uuid.UUID, count: int, seconds: float = 60
) -> list[repo.Run]:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        runs = await db.fetch(
            "SELECT * FROM automation_runs WHERE automation_id = $1 ORDER BY created_at",
            automation_id,
        )
        if len(runs) >= count and all(r["status"] not in ("queued", "running") for r in runs):
            return [run for r in runs if (run := repo.Run.from_row(r))]
        await asyncio.sleep(0.2)
    raise AssertionError(f"runs not finished: {[dict(r) for r in runs]}")


async def answers(db: asyncpg.Pool, chat_id: uuid.UUID) -> list[str]:
    rows = await db.fetch(
        "SELECT parts FROM chat_messages WHERE chat_id = $1 AND role = 'assistant' ORDER BY seq",
        chat_id,
    )
    return ["".join(p.get("text", "") for p in row["parts"] if p["type"] == "text") for row in rows]


@pytest.fixture
def worker(settings: Settings) -> Iterator[None]:
    broker.setup(settings)
    with workers.running_worker(settings, processes=1, threads=2):
        yield


@dataclasses.dataclass(frozen=True)
class InProcess:
    """What a worker has, opened in the test process: services, the saver and the graph."""

    services: Services
    saver: Any
    graph: graph.Graph


@pytest.fixture
async def in_process(
    db: asyncpg.Pool, settings: Settings, redis_url: str
) -> AsyncIterator[InProcess]:
    import redis.asyncio as aioredis

    from lookout.capabilities import fetch

    redis = aioredis.Redis.from_url(redis_url)
    async with (
        fetch.open_session(settings) as http,
        checkpointer.saver_context(settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=settings)
        yield InProcess(services=services, saver=saver, graph=graph.build(saver))
    await redis.aclose()


def _returning(saver: Any) -> Any:
    async def saver_of() -> Any:
        return saver

    return saver_of


async def manual_run(db: asyncpg.Pool, watch: repo.Automation) -> uuid.UUID | None:
    return await repo.insert_run(
        db,
        automation_id=watch.id,
        workspace_id=watch.workspace_id,
        scheduled_for=dt.datetime.now(dt.UTC),
        manual=True,
    )


async def executed(
    db: asyncpg.Pool, in_process: InProcess, watch: repo.Automation
) -> tuple[uuid.UUID, str]:
    """A manual run of the watch, executed in this process: (run id, final status)."""
    run_id = await manual_run(db, watch)
    assert run_id is not None
    return run_id, await runner.execute(in_process.services, in_process.graph, run_id)


THREAD_SIZE = """
SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = $1) AS rows,
       (SELECT coalesce(sum(length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1)
       + (SELECT coalesce(sum(pg_column_size(checkpoint)), 0) FROM checkpoints
          WHERE thread_id = $1) AS bytes
"""


async def dispatch_and_send(db: asyncpg.Pool) -> list[uuid.UUID]:
    from lookout.actors import watches as watch_actors

    run_ids = await dispatch.dispatch_due(db)
    watch_actors.send_all(run_ids)
    return run_ids


async def test_second_scheduled_run_reports_what_changed_since_the_first(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    worker: None,
) -> None:
    # Given a watched chat whose first scheduled run saw the page
    tenant = await tenant_factory(credits=50)
    watch = await make_watch(db, settings, tenant, page["url"])
    await make_due(db, watch.id)
    assert len(await dispatch_and_send(db)) == 1
    await wait_run(db, watch.id, 1)

    # When the page changes and the next run comes due
    page["lines"] = ["Soup of the day", "Apple tart"]
    await make_due(db, watch.id)
    await dispatch_and_send(db)
    runs = await wait_run(db, watch.id, 2)

    # Then run 2 reports the added and removed lines, read from the checkpoint of run 1
    said = await answers(db, watch.chat_id)
    assert [r.status for r in runs] == ["succeeded", "succeeded"]
    assert "**Menu**" in said[0] and "Changed since" not in said[0]
    assert "Changed since" in said[1]
    assert "Apple tart" in said[1] and "Fresh bread" in said[1]

    # And a third run with no change says so (the clock on the page is not a change)
    await make_due(db, watch.id)
    await dispatch_and_send(db)
    await wait_run(db, watch.id, 3)
    assert "No change since" in (await answers(db, watch.chat_id))[2]


async def test_dispatcher_claims_only_due_enabled_watches_once(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    # Yearly: an hourly fire passing mid-test (a loaded machine) would make `later` or `due` due
    due = await make_watch(db, settings, tenant, page["url"], cron=faults_watches.YEARLY)
    later = await make_watch(db, settings, tenant, page["url"], cron=faults_watches.YEARLY)
    disabled = await make_watch(db, settings, tenant, page["url"])
    await make_due(db, due.id)
    await make_due(db, disabled.id)
    await repo.disable_automation(db, automation_id=disabled.id)

    first, second = await asyncio.gather(dispatch.dispatch_due(db), dispatch.dispatch_due(db))

    assert len(first) + len(second) == 1
    runs = await db.fetch("SELECT automation_id FROM automation_runs")
    assert [r["automation_id"] for r in runs] == [due.id]
    assert await dispatch.dispatch_due(db) == []
    assert later.next_run_at is not None and later.next_run_at > dt.datetime.now(dt.UTC)


async def test_missed_fires_coalesce_into_one_run(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"], cron="*/5 * * * *")
    await make_due(db, watch.id, ago="3 hours")  # 36 fires missed while down

    # (the first fire after the dispatch's `now`, read between these two: a fire may pass)
    before = dt.datetime.now(dt.UTC)
    assert len(await dispatch.dispatch_due(db)) == 1
    now = dt.datetime.now(dt.UTC)
    after = await repo.get_automation(db, automation_id=watch.id, workspace_id=watch.workspace_id)
    assert after is not None and after.next_run_at is not None
    assert before < after.next_run_at <= now + dt.timedelta(minutes=5)


async def due_watches(db: asyncpg.Pool, settings: Settings, tenant: Tenant, count: int) -> None:
    """`count` watches, each on its own chat, all due."""
    for _ in range(count):
        chat = await repo.insert_chat(
            db, workspace_id=tenant.workspace.id, created_by=tenant.user.id, title=""
        )
        await service.create(
            db, settings, owner(tenant), chat=chat, message="what is on https://a.example",
            cadence="0 * * * *",
        )  # fmt: skip
    await db.execute("UPDATE automations SET next_run_at = now() - interval '1 minute'")


Claimed = tuple[list[uuid.UUID], int]  # what dispatch.claim_batch returns


def hook_claims(
    monkeypatch: pytest.MonkeyPatch,
    hook: Callable[[int, Callable[[], Awaitable[Claimed]]], Awaitable[Claimed]],
) -> None:
    """Route the dispatcher's n-th batch claim through hook(n, the claim)."""
    claim_batch, claims = dispatch.claim_batch, itertools.count(1)

    async def hooked(db: asyncpg.Pool, now: dt.datetime) -> Claimed:
        return await hook(next(claims), functools.partial(claim_batch, db, now))

    monkeypatch.setattr(dispatch, "claim_batch", hooked)


@pytest.fixture
async def seven_due_3_a_batch(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """7 due watches, which the dispatcher claims 3 a batch."""
    await due_watches(db, settings, await tenant_factory(), 7)
    monkeypatch.setattr(dispatch, "BATCH", 3)


@pytest.mark.usefixtures("seven_due_3_a_batch")
async def test_dispatch_claims_in_batches(db: asyncpg.Pool) -> None:
    assert len(await dispatch.dispatch_due(db)) == 7


@pytest.mark.usefixtures("seven_due_3_a_batch")
async def test_each_batch_is_sent_while_the_next_is_claimed(
    db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 7 due watches claimed 3 a batch; the second claim waits (at most 5 s) for the first
    # send to begin, and the first send for the second claim to end
    send_began, second_claimed = threading.Event(), threading.Event()
    saw: dict[str, bool] = {}

    async def second_claim(n: int, claim: Callable[[], Awaitable[Claimed]]) -> Claimed:
        if n != 2:
            return await claim()
        saw["claim 2: send 1 began"] = await asyncio.to_thread(send_began.wait, 5)
        claimed = await claim()
        second_claimed.set()
        return claimed

    hook_claims(monkeypatch, second_claim)
    sent: list[list[uuid.UUID]] = []

    def send(run_ids: list[uuid.UUID]) -> None:
        if not sent:
            send_began.set()
            saw["send 1: claim 2 ended"] = second_claimed.wait(5)
        sent.append(run_ids)

    # When the dispatcher runs
    run_ids = await dispatch.dispatch(db, send)

    # Then the second batch was claimed while the first was being sent, and every run was
    # sent once, in the order claimed
    assert saw == {"claim 2: send 1 began": True, "send 1: claim 2 ended": True}
    assert [len(batch) for batch in sent] == [3, 3, 1]
    assert [run_id for batch in sent for run_id in batch] == run_ids
    queued = await db.fetch("SELECT id FROM automation_runs WHERE status = 'queued'")
    assert {row["id"] for row in queued} == set(run_ids)


@pytest.mark.usefixtures("seven_due_3_a_batch")
async def test_a_claim_that_fails_leaves_the_batches_before_it_sent(
    db: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fail_second(n: int, claim: Callable[[], Awaitable[Claimed]]) -> Claimed:
        if n == 2:
            raise ConnectionError("Postgres went away")
        return await claim()

    hook_claims(monkeypatch, fail_second)
    sent: list[list[uuid.UUID]] = []

    with pytest.raises(ConnectionError):
        await dispatch.dispatch(db, sent.append)

    assert [len(batch) for batch in sent] == [3]
    runs = await db.fetch("SELECT id FROM automation_runs")
    assert {row["id"] for row in runs} == set(sent[0])


async def test_a_run_whose_enqueue_was_lost_is_sent_by_the_next_dispatch(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory
) -> None:
    await due_watches(db, settings, await tenant_factory(), 1)
    lost = await dispatch.dispatch(db, lambda run_ids: None)  # Redis took nothing
    await db.execute("UPDATE automation_runs SET created_at = now() - interval '2 minutes'")
    sent: list[list[uuid.UUID]] = []

    assert await dispatch.dispatch(db, sent.append) == lost
    assert sent == [lost]


async def test_a_batch_that_straddles_a_fire_moves_the_watch_past_it(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    # Given a watch every year due at its last fire, and a batch whose `now` was read just
    # before that fire (its claim runs just after); yearly, as the next fire of a shorter
    # cadence could come before the last claim (a loaded machine)
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"], cron=faults_watches.YEARLY)
    fire = await db.fetchval(
        "UPDATE automations SET next_run_at = date_trunc('year', now(), 'UTC')"
        " WHERE id = $1 RETURNING next_run_at", watch.id,
    )  # fmt: skip
    created, claimed = await dispatch.claim_batch(db, fire - dt.timedelta(milliseconds=5))

    # Then the watch moved to the fire after that one, and nothing is left to claim again
    after = await repo.get_automation(db, automation_id=watch.id, workspace_id=watch.workspace_id)
    assert (len(created), claimed) == (1, 1)
    assert after is not None and after.next_run_at == fire.replace(year=fire.year + 1)
    assert await dispatch.claim_batch(db, dt.datetime.now(dt.UTC)) == ([], 0)


async def test_a_run_delivered_twice_executes_once_and_a_busy_chat_is_skipped(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    in_process: InProcess,
) -> None:
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    services, chat_graph = in_process.services, in_process.graph
    run_id = await manual_run(db, watch)
    assert run_id is not None
    first, second = await asyncio.gather(
        runner.execute(services, chat_graph, run_id),
        runner.execute(services, chat_graph, run_id),
    )
    # Given the chat busy with an interactive turn, a scheduled run is skipped
    token = await lease.acquire(db, watch.chat_id)
    busy_run = await manual_run(db, watch)
    assert busy_run is not None
    skipped = await runner.execute(services, chat_graph, busy_run)
    await lease.release(db, watch.chat_id, token)

    assert sorted([first, second]) == ["duplicate", "succeeded"]
    assert len(await answers(db, watch.chat_id)) == 1
    assert skipped == "skipped"
    # And the skipped run stored no question (no message without the lease), the chat is free
    asked = "SELECT count(*) FROM chat_messages WHERE chat_id = $1 AND role = 'user'"
    assert await db.fetchval(asked, watch.chat_id) == 1
    assert await repo.chat_busy_until(db, chat_id=watch.chat_id) is None


async def test_a_run_with_nothing_to_notify_is_finished_with_its_answer(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    in_process: InProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a watch whose first run saw the page, and runs that record how they were finished
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    await executed(db, in_process, watch)
    finished_apart: list[uuid.UUID] = []
    finish_run = repo.finish_run

    async def recorded(db: Any, *, run_id: uuid.UUID, **end: Any) -> None:
        finished_apart.append(run_id)
        await finish_run(db, run_id=run_id, **end)

    monkeypatch.setattr(repo, "finish_run", recorded)

    # When a run finds no change, and then one finds a change (notifications to prepare)
    unchanged, unchanged_status = await executed(db, in_process, watch)
    page["lines"] = ["Soup of the day", "Apple tart"]
    changed, changed_status = await executed(db, in_process, watch)
    assert unchanged_status == changed_status == "succeeded"

    # Then both end succeeded; the unchanged one in the statement that stored its answer, the
    # changed one after its notifications were prepared
    rows = await db.fetch(
        "SELECT id, status, finished_at FROM automation_runs WHERE id = ANY($1::uuid[])",
        [unchanged, changed],
    )
    assert {r["id"]: r["status"] for r in rows} == {unchanged: "succeeded", changed: "succeeded"}
    assert all(r["finished_at"] is not None for r in rows)
    assert finished_apart == [changed]


async def test_growth_stays_flat_over_many_scheduled_turns(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    in_process: InProcess,
) -> None:
    from lookout.chat import turns

    tenant = await tenant_factory(credits=1000)
    watch = await make_watch(db, settings, tenant, page["url"])
    chat = await repo.get_chat(db, chat_id=watch.chat_id, workspace_id=tenant.workspace.id)
    assert chat is not None
    principal = Principal(
        kind="system", workspace_id=tenant.workspace.id, role="owner", user_id=tenant.user.id
    )

    async def ask(text: str) -> None:
        begun = await turns.begin(in_process.services, chat, text, source="automation")
        await turns.execute(in_process.services, in_process.graph, begun, text, principal)

    sizes = []
    most_rows = 0
    for turn in range(200):
        page["lines"] = ["Soup of the day", f"Special number {turn}"]
        await ask(f"what is on {page['url']}")
        size = await db.fetchrow(THREAD_SIZE, str(chat.id))
        most_rows = max(most_rows, size["rows"])
        if turn in (10, 199):
            sizes.append(size)
    # One more turn leaves an older checkpoint, which the once-a-minute sweep (as the
    # maintenance actor runs it) finds and drops
    await ask(f"what is on {page['url']}")
    assert (await db.fetchrow(THREAD_SIZE, str(chat.id)))["rows"] == 2
    assert await pruning.sweep(in_process.services.db, _returning(in_process.saver)) >= 1
    swept = await db.fetchrow(THREAD_SIZE, str(chat.id))

    at_10, at_199 = sizes
    assert most_rows <= pruning.INLINE_EVERY + 1  # bounded even with no sweep running
    assert at_199["rows"] <= at_10["rows"]
    assert swept["rows"] == 1
    assert at_199["bytes"] <= at_10["bytes"] * 1.2, (at_10["bytes"], at_199["bytes"])


async def test_chat_tools_start_and_stop_a_watch_on_the_current_chat(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    db: asyncpg.Pool,
) -> None:
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    chat_id = (await (await client.post("/api/chats", json={}, headers=tenant.headers)).json())[
        "data"
    ]["id"]
    base = str(client.make_url("")).rstrip("/")

    async def say(text: str) -> sse.Stream:
        return await sse.stream(
            base,
            "POST",
            f"/api/chats/{chat_id}/messages",
            headers=tenant.headers,
            json_body={"text": text},
        )

    started = await say(f"watch {page['url']} every hour")
    described = (await (await client.get(f"/api/chats/{chat_id}", headers=tenant.headers)).json())[
        "data"
    ]
    listed = (await (await client.get("/api/automations/watches", headers=tenant.headers)).json())[
        "data"
    ]
    stopped = await say("stop watching")
    after = (await (await client.get(f"/api/chats/{chat_id}", headers=tenant.headers)).json())[
        "data"
    ]

    watch_part = next(p for p in started.parts if p["type"] == "data-watch")
    assert watch_part["data"]["event"] == "started" and watch_part["data"]["cadence"] == "0 * * * *"
    assert "I'll check this every hour" in started.text
    assert described["watch"]["cadence"] == "0 * * * *"
    assert described["watch"]["credits_per_month"] >= 700
    assert [w["chat_id"] for w in listed["watches"]] == [chat_id]
    assert "stopped watching" in stopped.text
    assert after["watch"] is None
    assert await db.fetchval("SELECT count(*) FROM automations") == 0


async def test_rest_watch_controls_and_tenancy(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    db: asyncpg.Pool,
) -> None:
    broker.setup(settings)
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    stranger = await tenant_factory()
    chat_id = (await (await client.post("/api/chats", json={}, headers=tenant.headers)).json())[
        "data"
    ]["id"]
    body = {
        "chat_id": chat_id,
        "message": f"what is on {page['url']}",
        "cadence": "0 9 * * 1-5",
        "timezone": "Europe/Paris",
    }

    created = await client.post("/api/automations/watches", json=body, headers=tenant.headers)
    watch = (await created.json())["data"]
    replaced = await client.post(
        "/api/automations/watches", json={**body, "cadence": "0 8 * * *"}, headers=tenant.headers
    )
    new_watch = (await replaced.json())["data"]
    too_often = await client.post(
        "/api/automations/watches", json={**body, "cadence": "* * * * *"}, headers=tenant.headers
    )
    foreign = [
        await client.post(f"/api/automations/{new_watch['id']}/run", headers=stranger.headers),
        await client.delete(f"/api/automations/{new_watch['id']}", headers=stranger.headers),
        await client.get(f"/api/automations/{new_watch['id']}/runs", headers=stranger.headers),
        await client.post("/api/automations/watches", json=body, headers=stranger.headers),
    ]
    run = await client.post(f"/api/automations/{new_watch['id']}/run", headers=tenant.headers)
    runs = (
        await (
            await client.get(f"/api/automations/{new_watch['id']}/runs", headers=tenant.headers)
        ).json()
    )["data"]
    stopped = await client.delete(f"/api/automations/{new_watch['id']}", headers=tenant.headers)

    assert created.status == 201 and watch["schedule"] == "every weekday at 09:00 Europe/Paris"
    assert replaced.status == 201 and new_watch["id"] != watch["id"]
    assert too_often.status == 400
    assert [r.status for r in foreign] == [404, 404, 404, 404]
    assert run.status == 202 and [r["status"] for r in runs["runs"]] == ["queued"]
    assert runs["runs"][0]["manual"] is True
    assert stopped.status == 204
    assert await db.fetchval("SELECT count(*) FROM automations") == 0


async def test_a_removed_creators_watch_stops_with_a_message(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    in_process: InProcess,
) -> None:
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    await db.execute("UPDATE memberships SET role = 'viewer' WHERE user_id = $1", tenant.user.id)
    run_id, status = await executed(db, in_process, watch)

    after = await repo.get_automation(db, automation_id=watch.id, workspace_id=watch.workspace_id)
    assert status == "failed"
    assert after is not None and after.enabled is False
    assert "paused watching" in (await answers(db, watch.chat_id))[0]
    error = await db.fetchval("SELECT error FROM automation_runs WHERE id = $1", run_id)
    assert "no longer belongs to this workspace or may not spend" in error
    # And no question was asked in the chat (the claim began no turn), which is left free
    roles = await db.fetch(
        "SELECT role FROM chat_messages WHERE chat_id = $1 ORDER BY seq", watch.chat_id
    )
    assert [r["role"] for r in roles] == ["assistant"]
    assert await repo.chat_busy_until(db, chat_id=watch.chat_id) is None


async def test_the_claim_reads_the_checkpoint_the_saver_would_and_the_turn_uses_it(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    in_process: InProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a watch that ran twice (its thread holds checkpoints)
    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    for _ in range(2):
        assert (await executed(db, in_process, watch))[1] == "succeeded"

    # When a third run is claimed
    run_id = await manual_run(db, watch)
    assert run_id is not None
    token = uuid.uuid4()
    claimed = await repo.claim_run(
        db, run_id=run_id, lease_s=60, chat_token=token, chat_lease_s=60, question_id=uuid.uuid4()
    )
    assert claimed is not None and claimed.chat_leased
    await lease.release(db, watch.chat_id, token)

    # Then it read what the saver's own query reads for the thread
    latest = await repo.fetchrow(db, "latest_checkpoint", str(watch.chat_id), "")
    assert latest is not None and claimed.checkpoint == dict(latest)

    # And a claimed turn reads its checkpoint from the claim, not with a query of its own
    reads: list[str] = []
    fetchrow = repo.fetchrow

    async def counted(pool: Any, name: str, *args: Any) -> Any:
        reads.append(name)
        return await fetchrow(pool, name, *args)

    monkeypatch.setattr(repo, "fetchrow", counted)
    page["lines"] = ["Soup of the day", "Something new"]
    assert (await executed(db, in_process, watch))[1] == "succeeded"
    assert "latest_checkpoint" not in reads and "claim_run" in reads
    said = await answers(db, watch.chat_id)
    assert len(said) == 3 and "Changed since" in said[-1], said[-1]
    assert isinstance(in_process.graph.checkpointer, checkpointer.Saver)


async def test_a_run_claimed_while_a_turn_ends_on_its_chat_begins_its_turn_on_its_own(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    in_process: InProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lookout.chat import turns

    tenant = await tenant_factory()
    watch = await make_watch(db, settings, tenant, page["url"])
    services, chat_graph = in_process.services, in_process.graph
    begun: list[uuid.UUID] = []
    begin = turns.begin

    async def counted(*args: Any, **kwargs: Any) -> turns.Turn:
        turn = await begin(*args, **kwargs)
        begun.append(turn.id)
        return turn

    monkeypatch.setattr(turns, "begin", counted)
    run_id = await manual_run(db, watch)
    assert run_id is not None

    # Given the chat's row held by a transaction that changes it (as a turn's release does)
    async with db.acquire() as conn:
        ending = conn.transaction()
        await ending.start()
        await conn.execute("UPDATE chats SET updated_at = now() WHERE id = $1", watch.chat_id)
        # When the run is claimed meanwhile, and the transaction commits
        running = asyncio.create_task(runner.execute(services, chat_graph, run_id))
        await asyncio.sleep(0.3)
        assert not running.done()
        await ending.commit()
    status = await running

    # Then the claim took no lease on the changed row; the turn began on its own and ran
    assert status == "succeeded" and len(begun) == 1
    assert len(await answers(db, watch.chat_id)) == 1
    assert await repo.chat_busy_until(db, chat_id=watch.chat_id) is None
