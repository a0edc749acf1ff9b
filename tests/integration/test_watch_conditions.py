"""“Tell me when…” end to end: the setup flow in chat, a real worker running the watch, a local
webhook receiver hearing only when the condition becomes true; pause, resume, edit, describe."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from lookout import broker
from lookout.db import repo
from lookout.settings import Settings
from lookout.watches import dispatch
from tests.integration import sse, workers
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.integration.test_notify_watches import Receiver, Stack, add_target, receiver, stack
from tests.integration.test_watches import dispatch_and_send, make_due, wait_run

__all__ = ["receiver", "stack", "tenant_factory"]


@pytest.fixture
async def shop(aiohttp_server: Any) -> dict[str, Any]:
    """A product page (price in JSON-LD, none in the text), a stock page (phrases only) and a
    jobs page, whose state the test edits between runs."""
    state: dict[str, Any] = {"price": 59.0, "stock": "Sold out", "jobs": ["Senior engineer"]}

    async def kettle(request: web.Request) -> web.Response:
        offer = {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": "Stovetop kettle",
            "offers": {"@type": "Offer", "price": f"{state['price']:.2f}", "priceCurrency": "EUR"},
        }
        html = (
            f"<html><head><title>Kettle | Shop</title><script type='application/ld+json'>"
            f"{json.dumps(offer)}</script></head><body><main><h1>Stovetop kettle</h1>"
            "<p>Enamel, 2 litres. Free delivery from 30 €.</p></main></body></html>"
        )
        return web.Response(text=html, content_type="text/html")

    async def lamp(request: web.Request) -> web.Response:
        html = (
            f"<html><head><title>Desk lamp</title></head><body><main><h1>Desk lamp</h1>"
            f"<p>{state['stock']}</p></main></body></html>"
        )
        return web.Response(text=html, content_type="text/html")

    async def jobs(request: web.Request) -> web.Response:
        items = "".join(f"<li>{job}</li>" for job in state["jobs"])
        html = (
            f"<html><head><title>Careers</title></head><body><main><h1>Open roles</h1>"
            f"<ul>{items}</ul></main></body></html>"
        )
        return web.Response(text=html, content_type="text/html")

    server_app = web.Application()
    server_app.router.add_get("/kettle", kettle)
    server_app.router.add_get("/lamp", lamp)
    server_app.router.add_get("/jobs", jobs)
    server = await aiohttp_server(server_app)
    state.update({name: str(server.make_url(f"/{name}")) for name in ("kettle", "lamp", "jobs")})
    return state


@pytest.fixture
def worker(settings: Settings) -> Iterator[None]:
    broker.setup(settings)
    with workers.running_worker(settings, processes=1, threads=2):
        yield


async def new_chat(stack: Stack, tenant: Tenant) -> str:
    _, created = await stack.call("POST", "/api/chats", tenant, json={})
    return str(created["data"]["id"])


async def say(stack: Stack, tenant: Tenant, chat_id: str, text: str) -> sse.Stream:
    base = str(stack.client.make_url("")).rstrip("/")
    return await sse.stream(
        base,
        "POST",
        f"/api/chats/{chat_id}/messages",
        headers=tenant.headers,
        json_body={"text": text},
    )


def proposal_of(said: sse.Stream) -> dict[str, Any]:
    [part] = [p for p in said.parts if p["type"] == "data-watch-proposal"]
    data: dict[str, Any] = part["data"]
    return data


async def the_watch(stack: Stack, tenant: Tenant, chat_id: str) -> dict[str, Any]:
    _, listed = await stack.call("GET", "/api/automations/watches", tenant)
    [watch] = [w for w in listed["data"]["watches"] if w["chat_id"] == chat_id]
    return dict(watch)


async def run_once(db: asyncpg.Pool, automation_id: Any, count: int) -> list[repo.Run]:
    await make_due(db, automation_id)
    await dispatch_and_send(db)
    return await wait_run(db, automation_id, count)


async def heard(db: asyncpg.Pool, receiver: Receiver, count: int, seconds: float = 30) -> None:
    """Wait until the receiver has `count` bodies and every delivery is finished."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        open_ = await db.fetchval(
            "SELECT count(*) FROM notification_deliveries WHERE status NOT IN ('sent', 'failed',"
            " 'skipped', 'suppressed')"
        )
        if len(receiver.got) >= count and open_ == 0:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"heard {len(receiver.got)}, wanted {count}")


async def test_price_below_proposed_confirmed_then_notified_only_as_it_becomes_true(
    db: asyncpg.Pool,
    stack: Stack,
    tenant_factory: TenantFactory,
    shop: dict[str, Any],
    receiver: Receiver,
    worker: None,
) -> None:
    # Given a workspace with a webhook target and a chat
    tenant = await tenant_factory(credits=100)
    await add_target(stack, tenant, receiver.url(), default=True)
    chat_id = await new_chat(stack, tenant)

    # When the person asks to hear when the kettle drops below 50 euros
    said = await say(
        stack, tenant, chat_id, f"tell me when the price of {shop['kettle']} drops below 50 euros"
    )

    # Then the page is read once and a watch is proposed, not started
    proposal = proposal_of(said)
    assert proposal["status"] == "proposed" and proposal["current"] == 59.0
    assert proposal["condition"] == {"kind": "below", "value": 50.0, "text": None, "unit": "EUR"}
    assert "*Stovetop kettle*" in said.text and "below 50 €" in said.text
    assert "59 € now" in said.text and "Shall I start?" in said.text
    _, listed = await stack.call("GET", "/api/automations/watches", tenant)
    assert listed["data"]["watches"] == []

    # When they say yes
    started = await say(stack, tenant, chat_id, "yes")
    watch = await the_watch(stack, tenant, chat_id)
    assert "tell you when the price is below 50 €" in started.text
    assert watch["condition"]["kind"] == "below" and watch["notify"]["enabled"] is True

    # Then runs at 57, 45, 44, 62, 48 € notify at 45 and at 48 only (44 is still below: no
    # second notification until the price has been above), with the value read
    heard_counts = []
    for count, price in enumerate((57.0, 45.0, 44.0, 62.0, 48.0), start=1):
        shop["price"] = price
        runs = await run_once(db, watch["id"], count)
        await heard(db, receiver, [0, 1, 1, 1, 2][count - 1])
        heard_counts.append(len(receiver.got))
    assert heard_counts == [0, 1, 1, 1, 2]
    assert [r.status for r in runs] == ["succeeded"] * 5
    assert [(r.condition_met, r.value) for r in runs] == [
        (False, 57.0),
        (True, 45.0),
        (True, 44.0),
        (False, 62.0),
        (True, 48.0),
    ]
    bodies = receiver.bodies()
    assert [b["event"] for b in bodies] == ["watch.condition"] * 2
    assert [(b["value"], b["previous"]) for b in bodies] == [(45.0, 57.0), (48.0, 62.0)]
    assert "45 €" in bodies[0]["summary"]

    # And the chat says met / not met with the current and previous value each time
    rows = await db.fetch(
        "SELECT parts FROM chat_messages WHERE chat_id = $1 AND role = 'assistant' "
        "AND source = 'automation' ORDER BY seq",
        repo_uuid(chat_id),
    )
    texts = [
        "".join(p.get("text", "") for p in row["parts"] if p["type"] == "text") for row in rows
    ]
    assert texts[0].startswith("Now 57 € (was 59 €); I'll tell you when the price is below 50 €")
    assert texts[1].startswith("Now 45 € (was 57 €): the price is below 50 €.")
    assert texts[3].startswith("Now 62 € (was 44 €); I'll tell you")


def repo_uuid(value: str) -> Any:
    import uuid

    return uuid.UUID(value)


async def test_in_stock_and_mentions_and_new_items_notify_when_they_become_true(
    db: asyncpg.Pool,
    stack: Stack,
    tenant_factory: TenantFactory,
    shop: dict[str, Any],
    receiver: Receiver,
    worker: None,
) -> None:
    tenant = await tenant_factory(credits=100)
    await add_target(stack, tenant, receiver.url(), default=True)

    # Given a watch on the lamp's stock and one on the jobs page mentioning "internship"
    lamp_chat, jobs_chat = await new_chat(stack, tenant), await new_chat(stack, tenant)
    asked = await say(stack, tenant, lamp_chat, f"let me know when {shop['lamp']} is back in stock")
    assert proposal_of(asked)["condition"]["kind"] == "in_stock"
    assert "it isn't yet" in asked.text
    await say(stack, tenant, lamp_chat, "yes please")
    asked = await say(stack, tenant, jobs_chat, f"ping me when {shop['jobs']} mentions internship")
    assert proposal_of(asked)["condition"] == {
        "kind": "mentions",
        "value": None,
        "text": "internship",
        "unit": None,
    }
    await say(stack, tenant, jobs_chat, "ok")
    lamp, jobs = (
        await the_watch(stack, tenant, lamp_chat),
        await the_watch(stack, tenant, jobs_chat),
    )

    # When the lamp stays sold out, comes back, stays in stock
    for count, stock in enumerate(("Sold out", "In stock, ships today", "In stock"), start=1):
        shop["stock"] = stock
        lamp_runs = await run_once(db, lamp["id"], count)
    await heard(db, receiver, 1)
    assert [r.condition_met for r in lamp_runs] == [False, True, True]
    assert [b["title"] for b in receiver.bodies()] == ["Desk lamp"]

    # And the jobs page gains an internship, keeps it
    for count, listed in enumerate(
        (["Senior engineer"], ["Senior engineer", "Summer internship"], ["Summer internship"]),
        start=1,
    ):
        shop["jobs"] = listed
        jobs_runs = await run_once(db, jobs["id"], count)
    await heard(db, receiver, 2)

    # Then each notified exactly once, when its condition became true
    assert [r.condition_met for r in jobs_runs] == [False, True, True]
    assert len(receiver.got) == 2
    assert receiver.bodies()[1]["condition"]["text"] == "internship"


async def test_pause_resume_edit_and_describe_keep_the_watch_and_its_history(
    db: asyncpg.Pool,
    stack: Stack,
    tenant_factory: TenantFactory,
    shop: dict[str, Any],
    settings: Settings,
) -> None:
    broker.setup(settings)  # run-now enqueues a message; no worker needs to take it here
    tenant = await tenant_factory(credits=100)
    chat_id = await new_chat(stack, tenant)
    await say(stack, tenant, chat_id, f"watch {shop['jobs']} every hour")
    watch = await the_watch(stack, tenant, chat_id)
    await make_due(db, watch["id"])
    assert len(await dispatch.dispatch_due(db)) == 1
    row_before = dict(
        await db.fetchrow("SELECT * FROM automations WHERE id = $1", repo_uuid(watch["id"]))
    )

    # "what are you watching?" describes it and leaves it exactly as it was
    described = await say(stack, tenant, chat_id, "what are you watching?")
    assert "I'm watching" in described.text and "every hour" in described.text
    assert "stop watching" in described.text
    for question in ("how do I stop watching?", "when is the next check?"):
        await say(stack, tenant, chat_id, question)
    row_after = dict(
        await db.fetchrow("SELECT * FROM automations WHERE id = $1", repo_uuid(watch["id"]))
    )
    assert row_after == row_before

    # Pause: no run is dispatched; the chat is still watched, paused
    paused = await say(stack, tenant, chat_id, "pause watching for now")
    assert "paused" in paused.text
    await make_due(db, watch["id"])
    assert await dispatch.dispatch_due(db) == []
    assert "paused" in (await say(stack, tenant, chat_id, "what are you watching?")).text
    assert "paused" in (await say(stack, tenant, chat_id, "run it now")).text
    assert await db.fetchval("SELECT count(*) FROM automation_runs") == 1

    # Resume: runs are dispatched again
    await say(stack, tenant, chat_id, "resume watching")
    await make_due(db, watch["id"])
    assert len(await dispatch.dispatch_due(db)) == 1

    # Edit the cadence in chat, then over REST: same watch, same run history
    edited = await say(stack, tenant, chat_id, "check it every 2 hours instead")
    assert "every 2 hours" in edited.text
    status, body = await stack.call(
        "PATCH",
        f"/api/automations/{watch['id']}",
        tenant,
        json={
            "cadence": "0 9 * * *",
            "timezone": "Europe/Berlin",
            "condition": {"kind": "mentions", "text": "internship"},
        },
    )
    assert status == 200, body
    assert body["data"]["id"] == watch["id"]
    assert (body["data"]["cadence"], body["data"]["timezone"]) == ("0 9 * * *", "Europe/Berlin")
    assert body["data"]["condition"] == {
        "kind": "mentions",
        "value": None,
        "text": "internship",
        "unit": None,
    }
    runs = await db.fetchval(
        "SELECT count(*) FROM automation_runs WHERE automation_id = $1", repo_uuid(watch["id"])
    )
    assert runs == 2
    status, body = await stack.call(
        "PATCH", f"/api/automations/{watch['id']}", tenant, json={"enabled": False}
    )
    assert status == 200 and body["data"]["enabled"] is False
    status, body = await stack.call(
        "PATCH", f"/api/automations/{watch['id']}", tenant, json={"condition": {"kind": "below"}}
    )
    assert status == 400 and body["error"]["code"] == "invalid_input"

    # And "don't stop watching, just run it now" runs it and keeps it
    await stack.call("PATCH", f"/api/automations/{watch['id']}", tenant, json={"enabled": True})
    ran = await say(stack, tenant, chat_id, "don't stop watching, just run it now")
    assert "Running the check now" in ran.text
    assert (await the_watch(stack, tenant, chat_id))["id"] == watch["id"]
