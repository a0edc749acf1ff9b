"""A watch that finds a change tells the people outside the chat: signed webhooks, Apprise
(json://), flap suppression, failures recorded in the run history, and a real worker's retries."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from lookout import app, broker
from lookout.access.services import Services
from lookout.agent import graph
from lookout.capabilities import fetch
from lookout.db import checkpointer, repo
from lookout.notify import deliveries, message
from lookout.settings import Settings
from lookout.watches import runner
from tests.integration import sse, workers
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.integration.test_watches import (
    dispatch_and_send,
    make_due,
    make_watch,
    manual_run,
    page,
    wait_run,
)

__all__ = ["page", "tenant_factory"]

PUBLIC_URL = "https://lookout.example.com"


@dataclasses.dataclass
class Receiver:
    """A local endpoint recording what it is sent; `status` is what it answers."""

    server: TestServer
    got: list[tuple[dict[str, str], bytes]] = dataclasses.field(default_factory=list)
    status: int = 200

    def url(self, path: str = "/hook") -> str:
        return str(self.server.make_url(path))

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.got]


@pytest.fixture
async def receiver(aiohttp_server: Any) -> Receiver:
    holder: dict[str, Receiver] = {}

    async def hook(request: web.Request) -> web.Response:
        found = holder["receiver"]
        found.got.append((dict(request.headers), await request.read()))
        return web.Response(status=found.status, text="ok")

    server_app = web.Application()
    server_app.router.add_route("*", "/{tail:.*}", hook)
    # No access log: the receiver is not Lookout, and its request lines hold the test's secrets.
    holder["receiver"] = Receiver(await aiohttp_server(server_app, access_log=None))
    return holder["receiver"]


@dataclasses.dataclass
class Stack:
    """In-process services, the chat graph, the REST app, and the deliveries handed over."""

    services: Services
    graph: graph.Graph
    client: TestClient[Any, Any]
    handed: list[uuid.UUID]

    async def run(self, watch: repo.Automation) -> str:
        """One scheduled run of `watch`, then every delivery it handed over, tried once."""
        run_id = await manual_run(self.services.db, watch)
        assert run_id is not None
        status = await runner.execute(self.services, self.graph, run_id)
        while self.handed:
            await deliveries.attempt(self.services, self.handed.pop(0))
        return status

    async def call(self, method: str, path: str, tenant: Tenant, **kwargs: Any) -> Any:
        response = await self.client.request(method, path, headers=tenant.headers, **kwargs)
        return response.status, await response.json()


@pytest.fixture
async def stack(
    settings: Settings, redis_url: str, db: asyncpg.Pool, aiohttp_client: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Stack]:  # fmt: skip
    settings = settings.replace(public_url=PUBLIC_URL)
    handed: list[uuid.UUID] = []
    monkeypatch.setattr(deliveries, "_enqueue", handed.extend)
    redis = aioredis.Redis.from_url(redis_url)
    async with (
        fetch.open_session(settings) as http,
        checkpointer.saver_context(settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=settings)
        client = await aiohttp_client(app.create_app(settings))
        yield Stack(services, graph.build(saver), client, handed)
    await redis.aclose()


async def add_target(stack: Stack, tenant: Tenant, url: str, **extra: Any) -> dict[str, Any]:
    status, body = await stack.call(
        "POST", f"/api/workspaces/{tenant.workspace.id}/notification-targets", tenant,
        json={"name": f"target-{uuid.uuid4().hex[:6]}", "url": url, **extra},
    )  # fmt: skip
    assert status == 201, body
    data: dict[str, Any] = body["data"]
    return data


async def watched(
    stack: Stack, tenant: Tenant, url: str, **notify: Any
) -> tuple[repo.Automation, dict[str, Any]]:
    """A watch of `url` with notifications on (PATCHed like the web page does)."""
    watch = await make_watch(stack.services.db, stack.services.settings, tenant, url)
    status, body = await stack.call(
        "PATCH", f"/api/automations/{watch.id}", tenant,
        json={"notify": {"enabled": True, **notify}},
    )  # fmt: skip
    assert status == 200, body
    return watch, body["data"]


async def history(stack: Stack, tenant: Tenant, watch: repo.Automation) -> list[dict[str, Any]]:
    status, body = await stack.call("GET", f"/api/automations/{watch.id}/runs", tenant)
    assert status == 200
    runs: list[dict[str, Any]] = body["data"]["runs"]
    return list(reversed(runs))  # oldest first


async def test_a_change_notifies_the_webhook_once_with_a_valid_signature(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], receiver: Receiver
) -> None:
    # Given a default webhook target and a watch that notifies it
    tenant = await tenant_factory()
    created = await add_target(stack, tenant, receiver.url(), default=True)
    watch, summary = await watched(stack, tenant, page["url"])

    # When the baseline run sees the page, then the page changes and the next run sees it
    assert await stack.run(watch) == "succeeded"
    page["lines"] = ["Soup of the day", "Apple tart"]
    assert await stack.run(watch) == "succeeded"

    # Then the receiver got exactly one signed watch.changed event with the diff and the links
    assert "default notification target" in summary["sentence"]
    assert len(receiver.got) == 1
    headers, raw = receiver.got[0]
    assert message.verify(created["signing_secret"], raw, headers["X-Lookout-Signature"])
    event = json.loads(raw)
    assert headers["X-Lookout-Event"] == "watch.changed" == event["event"]
    assert headers["X-Lookout-Delivery"] == event["delivery_id"]
    assert event["watch_id"] == str(watch.id) and event["chat_id"] == str(watch.chat_id)
    assert event["changes"][0]["added"] == ["Apple tart"]
    assert event["changes"][0]["removed"] == ["Fresh bread"]
    assert event["chat_url"] == f"{PUBLIC_URL}/#/chat/{watch.chat_id}"
    runs = await history(stack, tenant, watch)
    assert runs[0]["deliveries"] == []
    assert [(d["status"], d["attempts"]) for d in runs[1]["deliveries"]] == [("sent", 1)]
    assert event["run_id"] == runs[1]["id"]


async def test_a_delivery_handed_over_twice_is_sent_once(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    await add_target(stack, tenant, receiver.url(), default=True)
    watch, _ = await watched(stack, tenant, page["url"])
    await stack.run(watch)
    page["lines"] = ["Soup of the day", "Apple tart"]
    run_id = await manual_run(stack.services.db, watch)
    assert run_id is not None
    await runner.execute(stack.services, stack.graph, run_id)
    [delivery_id] = stack.handed

    # Two deliveries of the same message at once, and a late third one
    await asyncio.gather(*(deliveries.attempt(stack.services, delivery_id) for _ in range(2)))
    await deliveries.attempt(stack.services, delivery_id)

    assert len(receiver.got) == 1


async def test_no_change_and_the_baseline_send_nothing(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    await add_target(stack, tenant, receiver.url(), default=True)
    watch, _ = await watched(stack, tenant, page["url"])

    statuses = [await stack.run(watch) for _ in range(3)]  # the clock on the page ticks

    assert statuses == ["succeeded"] * 3
    assert receiver.got == []
    assert all(run["deliveries"] == [] for run in await history(stack, tenant, watch))


async def test_a_page_flipping_between_two_versions_is_reported_once_with_two_compared(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], receiver: Receiver
) -> None:
    # Given a watch comparing each new version with the last two
    tenant = await tenant_factory()
    await add_target(stack, tenant, receiver.url(), default=True)
    watch, summary = await watched(stack, tenant, page["url"], compared_versions=2)

    # When the page alternates A, B, A, B, then shows something new
    for lines in (["Soup", "Menu A"], ["Soup", "Menu B"], ["Soup", "Menu A"], ["Soup", "Menu B"],
                  ["Soup", "Menu C"]):  # fmt: skip
        page["lines"] = lines
        assert await stack.run(watch) == "succeeded"

    # Then only the first flip and the genuinely new version were sent; the flaps say why not
    assert summary["notify"]["compared_versions"] == 2
    # ("Menu A" → "Menu B" is one line edited: a modified line, before → after)
    edited = [body["changes"][0]["modified"] for body in receiver.bodies()]
    assert edited == [[{"before": "Menu A", "after": "Menu B"}],
                      [{"before": "Menu B", "after": "Menu C"}]]  # fmt: skip
    assert [body["diff"]["changed"] for body in receiver.bodies()] == [True, True]
    runs = await history(stack, tenant, watch)
    assert [[d["status"] for d in run["deliveries"]] for run in runs] == [
        [],
        ["sent"],
        ["suppressed"],
        ["suppressed"],
        ["sent"],
    ]
    assert "last 2 versions" in runs[2]["deliveries"][0]["note"]


async def test_an_apprise_json_target_gets_the_summary_and_the_links(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    apprise_url = receiver.url("/apprise").replace("http://", "json://", 1)
    target = await add_target(stack, tenant, apprise_url)
    watch, summary = await watched(stack, tenant, page["url"], targets=[target["target"]["id"]])

    await stack.run(watch)
    page["lines"] = ["Soup of the day", "Apple tart"]
    await stack.run(watch)

    assert f"send a notification to “{target['target']['name']}”." in summary["sentence"]
    [sent] = receiver.bodies()
    assert sent["title"] == "Lookout: Menu changed"
    assert "+ Apple tart" in sent["message"] and "- Fresh bread" in sent["message"]
    assert page["url"] in sent["message"]
    assert f"{PUBLIC_URL}/#/chat/{watch.chat_id}" in sent["message"]


async def test_a_watch_without_a_target_records_why_nothing_was_sent(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    watch, _ = await watched(stack, tenant, page["url"])

    await stack.run(watch)
    page["lines"] = ["Soup of the day", "Apple tart"]
    await stack.run(watch)

    [delivery] = (await history(stack, tenant, watch))[1]["deliveries"]
    assert delivery["status"] == "skipped" and "no default notification target" in delivery["note"]


async def test_a_failing_receiver_is_retried_then_recorded_failed_in_process(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    await add_target(stack, tenant, receiver.url(), default=True)
    watch, _ = await watched(stack, tenant, page["url"])
    receiver.status = 503
    await stack.run(watch)
    page["lines"] = ["Soup of the day", "Apple tart"]
    run_id = await manual_run(stack.services.db, watch)
    assert run_id is not None
    await runner.execute(stack.services, stack.graph, run_id)
    [delivery_id] = stack.handed
    db = stack.services.db

    waits = []
    for _ in range(4):  # a fourth message (a duplicate) finds nothing left to send
        await db.execute(  # the backoff has passed
            "UPDATE notification_deliveries SET next_attempt_at = now() WHERE id = $1", delivery_id
        )
        waits.append(await deliveries.attempt(stack.services, delivery_id))

    retry_s = stack.services.settings.notify_retry_s
    assert waits == [retry_s, retry_s * 2, None, None]
    assert len(receiver.got) == 3
    [delivery] = (await history(stack, tenant, watch))[1]["deliveries"]
    assert (delivery["status"], delivery["attempts"]) == ("failed", 3)
    assert "HTTP 503" in delivery["last_error"]


async def test_notify_me_in_the_chat_sets_up_notifications_in_the_same_turn(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    _, created = await stack.call("POST", "/api/chats", tenant, json={})
    chat_id = created["data"]["id"]
    base = str(stack.client.make_url("")).rstrip("/")

    said = await sse.stream(
        base, "POST", f"/api/chats/{chat_id}/messages", headers=tenant.headers,
        json_body={"text": f"notify me when {page['url']} changes"},
    )  # fmt: skip

    _, listed = await stack.call("GET", "/api/automations/watches", tenant)
    [watch] = listed["data"]["watches"]
    assert watch["chat_id"] == chat_id
    assert watch["notify"] == {"enabled": True, "targets": None, "compared_versions": 1}
    # No target yet: the answer says how to set one up instead of promising a notification
    assert "Settings → Notifications" in said.text
    assert "I'll also send" not in said.text


# --- a real worker ---------------------------------------------------------------------------


@pytest.fixture
def fast_retry_worker(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("LOOKOUT_NOTIFY_RETRY_S", "0.2")
    broker.setup(settings)
    with workers.running_worker(settings, processes=1, threads=2):
        yield


async def wait_deliveries(db: asyncpg.Pool, count: int, seconds: float = 60) -> list[Any]:
    deadline = asyncio.get_running_loop().time() + seconds
    rows: list[Any] = []
    while asyncio.get_running_loop().time() < deadline:
        rows = await db.fetch("SELECT * FROM notification_deliveries ORDER BY created_at")
        if len(rows) >= count and all(r["status"] in ("sent", "failed") for r in rows):
            return rows
        await asyncio.sleep(0.2)
    raise AssertionError(f"deliveries not finished: {[dict(r) for r in rows]}")


async def test_a_worker_retries_a_down_receiver_then_records_failed_and_keeps_watching(
    db: asyncpg.Pool,
    settings: Settings,
    stack: Stack,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    receiver: Receiver,
    fast_retry_worker: None,
) -> None:
    # Given a watch notifying a receiver that is down (answers 503)
    tenant = await tenant_factory(credits=50)
    await add_target(stack, tenant, receiver.url(), default=True)
    watch, _ = await watched(stack, tenant, page["url"])
    receiver.status = 503

    # When two scheduled runs pass, the page changing in between
    await make_due(db, watch.id)
    await dispatch_and_send(db)
    await wait_run(db, watch.id, 1)
    page["lines"] = ["Soup of the day", "Apple tart"]
    await make_due(db, watch.id)
    await dispatch_and_send(db)
    await wait_run(db, watch.id, 2)
    [delivery] = await wait_deliveries(db, 1)

    # Then the worker tried three times, recorded the failure, and the watch runs on
    assert (delivery["status"], delivery["attempts"]) == ("failed", 3)
    assert len(receiver.got) == 3
    assert len({headers["X-Lookout-Delivery"] for headers, _ in receiver.got}) == 1
    page["lines"] = ["Soup of the day", "Apple tart", "Pear crumble"]
    receiver.status = 200
    await make_due(db, watch.id)
    await dispatch_and_send(db)
    runs = await wait_run(db, watch.id, 3)
    assert [run.status for run in runs] == ["succeeded"] * 3
    sent = await wait_deliveries(db, 2)
    assert [row["status"] for row in sent] == ["failed", "sent"]
    assert receiver.bodies()[-1]["changes"][0]["added"] == ["Pear crumble"]
