"""The chat door: durable turns over SSE, read with a real SSE parser."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from lookout import app, appkeys
from lookout.chat import turns
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import factories, sse
from tests.integration.factories import (
    Site,
    Tenant,
    TenantFactory,
    member_cookie,
    site,
    tenant_factory,
)

__all__ = ["site", "tenant_factory"]


@pytest.fixture
async def client(aiohttp_client: Any, settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(settings))


def base(client: Any) -> str:
    return str(client.make_url("")).rstrip("/")


async def new_chat(client: Any, tenant: Tenant) -> str:
    response = await client.post("/api/chats", json={}, headers=tenant.headers)
    assert response.status == 201
    return str((await response.json())["data"]["id"])


async def say(client: Any, tenant: Tenant, chat_id: str, text: str, **kwargs: Any) -> sse.Stream:
    return await sse.stream(
        base(client), "POST", f"/api/chats/{chat_id}/messages",
        headers=tenant.headers, json_body={"text": text}, **kwargs,
    )  # fmt: skip


async def messages(client: Any, tenant: Tenant, chat_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/chats/{chat_id}/messages", headers=tenant.headers)
    return list((await response.json())["data"]["messages"])


async def test_a_turn_streams_ui_parts_and_is_persisted(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a chat and a page
    tenant = await tenant_factory(credits=10)
    chat_id = await new_chat(client, tenant)

    # When the user asks about the page
    result = await say(client, tenant, chat_id, f"what is on {site.url('/menu')} right now?")

    # Then the stream speaks the AI SDK UI message protocol, every event with an id
    assert result.status == 200
    assert result.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert result.types[0] == "start" and result.types[-1] == "finish"
    assert result.events[-1] == ("", "[DONE]") or result.events[-1][1] == "[DONE]"
    assert all(event_id for event_id, data in result.events if data != "[DONE]")
    assert result.types.index("tool-input-available") < result.types.index("tool-output-available")
    assert result.types.index("tool-output-available") < result.types.index("text-start")
    tool_call = next(p for p in result.parts if p["type"] == "tool-input-available")
    assert tool_call["toolName"] == "web_scrape"
    assert "**menu**" in result.text
    # And both messages are stored, the answer under the id announced by `start`
    stored = await messages(client, tenant, chat_id)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["id"] == result.parts[0]["messageId"]
    assert any(
        p["type"] == "tool-web_scrape" and p["state"] == "output-available"
        for p in stored[1]["parts"]
    )
    # And the scrape cost one credit, reserved before it ran and settled with the answer
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 9
    ledger = await repo.recent_ledger(db, workspace_id=tenant.workspace.id, limit=10)
    assert sorted(e.kind for e in ledger if e.verb == "web.scrape") == ["reserve", "settle"]


async def test_use_chat_body_is_accepted(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    body = {
        "id": chat_id,
        "trigger": "submit-message",
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "parts": [{"type": "text", "text": f"summarize {site.url('/a')}"}],
            }
        ],
    }

    result = await sse.stream(
        base(client),
        "POST",
        f"/api/chats/{chat_id}/messages",
        headers=tenant.headers,
        json_body=body,
    )

    assert result.status == 200 and result.types[-1] == "finish"
    assert site.hits == {"/a": 1}


async def test_a_second_concurrent_turn_is_busy_and_nothing_is_lost(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    site.delay = 1.0
    first = asyncio.create_task(say(client, tenant, chat_id, f"summarize {site.url('/slow/1')}"))
    for _ in range(200):  # the first turn holds the chat: it is reading the page (1 s)
        if site.hits:
            break
        await asyncio.sleep(0.05)

    second = await client.post(
        f"/api/chats/{chat_id}/messages",
        json={"text": "summarize it again"},
        headers=tenant.headers,
    )
    done = await first

    assert second.status == 409
    assert (await second.json())["error"]["code"] == "busy"
    assert int(second.headers["Retry-After"]) >= 1
    assert done.types[-1] == "finish"
    assert [m["role"] for m in await messages(client, tenant, chat_id)] == ["user", "assistant"]


async def test_the_answer_is_persisted_when_the_client_leaves(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    site.delay = 0.5

    partial = await say(
        client, tenant, chat_id, f"summarize {site.url('/slow/gone')}", stop_after=1
    )
    assert partial.types == ["start"]
    for _ in range(50):
        stored = await messages(client, tenant, chat_id)
        if len(stored) == 2:
            break
        await asyncio.sleep(0.1)

    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["parts"][-1]["type"] == "text"


async def test_a_turn_cut_off_while_its_answer_is_stored_keeps_the_answer(
    client: Any, tenant_factory: TenantFactory, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = await tenant_factory(credits=10)
    chat_id = await new_chat(client, tenant)
    storing, release = asyncio.Event(), repo.release_chat_lease

    async def slow_release(*args: Any, **kwargs: Any) -> bool:
        if kwargs.get("message") is not None:  # the statement that stores the answer
            storing.set()
            await asyncio.sleep(0.3)  # still in flight when shutdown cancels the turn
        return await release(*args, **kwargs)

    monkeypatch.setattr(repo, "release_chat_lease", slow_release)
    asked = asyncio.create_task(say(client, tenant, chat_id, f"what is on {site.url('/menu')}?"))
    await asyncio.wait_for(storing.wait(), 30)
    running = set(client.server.app[appkeys.TURNS])
    for turn in running:
        turn.cancel()
    await asyncio.wait(running, timeout=10)
    stream = await asked

    stored = await messages(client, tenant, chat_id)
    assert stream.types[-1] == "finish"  # not the "interrupted" error part
    assert [m["role"] for m in stored] == ["user", "assistant"]
    said = " ".join(p.get("text", "") for p in stored[1]["parts"] if p["type"] == "text")
    assert "**menu**" in said and turns.INTERRUPTED not in said


async def test_resume_replays_exactly_the_missed_events(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    site.delay = 5.0  # the resume must arrive while the turn reads the page (a loaded machine)
    partial = await say(client, tenant, chat_id, f"summarize {site.url('/slow/r')}", stop_after=2)
    last_seen = partial.events[-1][0]

    resumed = await sse.stream(
        base(client), "GET", f"/api/chats/{chat_id}/stream",
        headers={**tenant.headers, "Last-Event-ID": last_seen},
    )  # fmt: skip
    idle = await client.get(f"/api/chats/{chat_id}/stream", headers=tenant.headers)

    ids = [event_id for event_id, data in resumed.events if data != "[DONE]"]
    assert resumed.status == 200 and resumed.types[-1] == "finish"
    assert ids and all(event_id > last_seen for event_id in ids)
    assert [e for e in partial.events if e[0] in ids] == []
    assert "start" not in resumed.types
    assert idle.status == 204


async def test_a_crashed_turns_lease_expires(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    await db.execute(
        "UPDATE chats SET ai_responding = true, responding_token = gen_random_uuid(), "
        "responding_until = now() - interval '1 second' WHERE id = $1::uuid", chat_id,
    )  # fmt: skip

    result = await say(client, tenant, chat_id, f"summarize {site.url('/after-crash')}")

    assert result.status == 200 and result.types[-1] == "finish"


async def test_ambiguous_message_asks_once_then_proceeds(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)

    asked = await say(client, tenant, chat_id, site.url("/news"))
    answered = await say(client, tenant, chat_id, "just once please")

    assert "data-clarify" in asked.types
    assert asked.text == "Just this once, or should I keep watching it for you?"
    assert site.hits == {"/news": 1}
    assert "**news**" in answered.text
    assert "tool-input-available" not in asked.types


async def test_rule_planner_compares_and_discovers(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)

    compared = await say(
        client, tenant, chat_id, f"compare {site.url('/left')} and {site.url('/right')}"
    )
    listed = await say(client, tenant, chat_id, f"list the pages of {site.url('/')}")

    assert compared.text.startswith("Comparing 2 pages:\n\n| | left | right |")
    assert "[left](" in compared.text and "[right](" in compared.text
    tool = [p for p in listed.parts if p["type"] == "tool-input-available"]
    assert tool[0]["toolName"] == "web_discover"


async def test_viewer_cannot_spend_through_chat(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool, settings: Settings
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    cookie = await member_cookie(db, settings, tenant, role="viewer")
    origin = {"Origin": factories.page_origin(client)}
    client.session.cookie_jar.update_cookies(cookie)

    response = await client.post(
        f"/api/chats/{chat_id}/messages",
        json={"text": f"summarize {site.url('/v')}"},
        headers=origin,
    )

    assert response.status == 403
    assert site.hits == {}


async def test_another_workspaces_chat_is_not_found(
    client: Any, tenant_factory: TenantFactory
) -> None:
    owner = await tenant_factory()
    stranger = await tenant_factory()
    chat_id = await new_chat(client, owner)

    for method, path in [("GET", ""), ("GET", "/messages"), ("DELETE", ""), ("GET", "/stream")]:
        response = await client.request(
            method, f"/api/chats/{chat_id}{path}", headers=stranger.headers
        )
        assert response.status == 404, (method, path)
    posted = await client.post(
        f"/api/chats/{chat_id}/messages", json={"text": "hi"}, headers=stranger.headers
    )
    assert posted.status == 404


async def test_events_tail_receives_every_turn(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    tail = asyncio.create_task(
        sse.stream(
            base(client),
            "GET",
            f"/api/chats/{chat_id}/events",
            # from the chat's start: a tail that subscribes after the turn began (a loaded
            # machine) would miss its first parts
            headers={**tenant.headers, "Last-Event-ID": "0-0"},
            stop_after=4,
        )
    )
    await asyncio.sleep(0.3)

    await say(client, tenant, chat_id, f"summarize {site.url('/t')}")
    tailed = await asyncio.wait_for(tail, 10)

    assert tailed.types[:3] == ["start", "tool-input-available", "tool-output-available"]


async def test_more_listeners_than_redis_connections_all_receive_the_turn(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    # Given more /events listeners than the Redis client pool has connections (100)
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    listeners = [
        asyncio.create_task(
            sse.stream(
                base(client),
                "GET",
                f"/api/chats/{chat_id}/events",
                headers={**tenant.headers, "Last-Event-ID": "0-0"},
                stop_after=3,
            )
        )
        for _ in range(120)
    ]
    await asyncio.sleep(1.0)

    # When a turn runs, every listener gets its first parts (late joiners catch up from 0-0)
    await say(client, tenant, chat_id, f"summarize {site.url('/crowd')}")
    heard = await asyncio.wait_for(asyncio.gather(*listeners), 90)

    outcomes = {(h.status, tuple(h.types)) for h in heard}
    assert outcomes == {(200, ("start", "tool-input-available", "tool-output-available"))}


async def test_a_follow_up_that_says_it_means_the_previous_page(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    await say(client, tenant, chat_id, f"what is on {site.url('/prices')}?")

    again = await say(client, tenant, chat_id, "watch it every hour")

    scrape = next(p for p in again.parts if p["type"] == "tool-input-available")
    assert scrape["input"]["urls"] == [site.url("/prices")]
    watch = next(p for p in again.parts if p["type"] == "data-watch")
    assert site.url("/prices") in watch["data"]["message"]
    assert watch["data"]["cadence"] == "0 * * * *"
