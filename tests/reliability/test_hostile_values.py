"""The hostile values a probe found answering 500 (issue #22), each as a class on every route it
reaches: numbers JSON or Python cannot hold in any JSON body, crons with no fire within a year,
huge numbers in the text the cadence parser reads, stream ids outside Redis's range.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis

from lookout import app, parts
from lookout.access import auth
from lookout.chat import events
from lookout.settings import Settings
from lookout.watches import service
from tests.integration import factories, sse
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.reliability import hostile_fixtures

__all__ = ["tenant_factory"]

NUMBERS = {
    "5,000-digit integer": b"9" * 5000,
    "negative 5,000-digit integer": b"-" + b"9" * 5000,
    "NaN": b"NaN",
    "Infinity": b"-Infinity",
    "1e999": b"1e999",
}
# The OAuth server's endpoints answer RFC 6749 / 7591 errors, not the envelope.
OAUTH = {"/token", "/revoke", "/register"}
MCP = {"Content-Type": "application/json", "Accept": "application/json"}
NINES = "9" * 320
BAD_STREAM_IDS = [
    "99999999999999999999-1", "1-99999999999999999999", "18446744073709551616-0",
    "18446744073709551615-18446744073709551615", "\u0661-\u0661", "\u00b2-1", "1-" + "0" * 30,
]  # fmt: skip


async def _chat_and_watch(client: Any, tenant: Tenant) -> tuple[str, str]:
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat = str((await created.json())["data"]["id"])
    watched = await client.post("/api/automations/watches", headers=tenant.headers,
                                json={"chat_id": chat, "message": "what is new on example.com",
                                      "cadence": "0 9 * * *"})  # fmt: skip
    assert watched.status == 201, await watched.text()
    return chat, str((await watched.json())["data"]["id"])


@pytest.mark.parametrize("label", list(NUMBERS))
async def test_a_number_json_or_python_cannot_hold_is_invalid_input_on_every_json_route(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
    label: str,
) -> None:
    # Given an owner signed in (every route open to them), a chat and a watch to address
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    cookie = {auth.COOKIE: await auth.new_session(db, settings, tenant.user.id)}
    origin = {"Origin": factories.page_origin(client), "Content-Type": "application/json"}
    chat, watch = await _chat_and_watch(client, tenant)
    routes = [
        *hostile_fixtures.body_routes(client.server.app),
        ("PATCH", f"/api/chats/{chat}"), ("POST", f"/api/chats/{chat}/messages"),
        ("PATCH", f"/api/automations/{watch}"),
    ]  # fmt: skip
    body = b'{"email": "a@example.com", "text": ' + NUMBERS[label] + b', "n": [1]}'

    # When each route that reads JSON gets a body holding the number
    answers: dict[str, tuple[int, Any]] = {}
    for method, canonical in routes:
        path = hostile_fixtures.fill_path(canonical, tenant.workspace.id)
        if method == "*":
            response = await client.post(path, data=body, headers={**MCP, **tenant.headers})
        else:
            response = await client.request(method, path, data=body, headers=origin,
                                             cookies=cookie)  # fmt: skip
        answers[f"{method} {canonical}"] = (response.status, await response.json())

    # Then every one (signup and login included) says the body is not valid, and why
    assert {"POST /api/auth/signup", "POST /api/auth/login", "* /mcp"} <= answers.keys()
    assert len(answers) >= 13, answers.keys()
    for name, (status, answer) in answers.items():
        if name.split(" ", 1)[1] in OAUTH:  # RFC 6749 / 7591 errors: {"error": "invalid_…"}
            assert status in (400, 401) and isinstance(answer["error"], str), (name, answer)
            continue
        assert status == 400, (name, status, answer)
        code = answer["error"]["code"]
        assert code == (-32700 if name == "* /mcp" else "invalid_input"), (name, answer)
        message = answer["error"]["message"]
        assert ("4300 digits" in message) if "digit" in label else ("finite" in message), message


@pytest.mark.parametrize("cron", ["0 0 30 2 *", "0 0 31 4 *", "0 0 29 2 *", "0 0 31 2,4,6 *"])
async def test_a_cron_with_no_fire_within_a_year_is_refused_naming_the_cadence(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, cron: str
) -> None:
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    chat, _ = await _chat_and_watch(client, tenant)

    response = await client.post("/api/automations/watches", headers=tenant.headers,
                                 json={"chat_id": chat, "message": "what is new on example.com",
                                       "cadence": cron})  # fmt: skip

    body = await response.json()
    assert response.status == 400, body
    assert body["error"]["code"] == "invalid_input"
    assert body["error"]["details"]["fields"] == {"cadence": ["no fire within a year"]}


@pytest.mark.parametrize(
    "text",
    [f"watch example.com every {NINES} minutes", f"check example.com {'9' * 5000} times a day",
     f"keep an eye on example.com every {NINES}.{NINES} hours"],
)  # fmt: skip
async def test_huge_numbers_in_a_watch_question_or_chat_message_are_read_bounded(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, text: str
) -> None:
    # Given a chat
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    chat, _ = await _chat_and_watch(client, tenant)

    # When the number is in a watch's question (when it fits one), then in a chat message
    if len(text) <= service.MAX_MESSAGE:
        watched = await client.post("/api/automations/watches", headers=tenant.headers,
                                    json={"chat_id": chat, "message": text,
                                          "cadence": "0 9 * * *"})  # fmt: skip
        # Then the watch is made
        assert watched.status == 201, await watched.text()
    base = str(client.make_url("")).rstrip("/")
    said = await sse.stream(base, "POST", f"/api/chats/{chat}/messages", headers=tenant.headers,
                            json_body={"text": text})  # fmt: skip

    # Then the turn answers (a watch started on a bounded cadence), with no error part
    assert said.status == 200 and said.types[-1] == "finish", said.parts[-3:]
    assert "error" not in said.types
    started = [p for p in said.parts if p["type"] == "data-watch"]
    if len(text) <= service.MAX_MESSAGE:
        assert started and started[0]["data"]["event"] == "started", said.text
    else:  # too long to keep as a watch's question: said so, in words
        assert not started and "The watched question has 1 to 2000 characters." in said.text


async def _first_frame(base: str, path: str, headers: Any) -> sse.Stream:
    return await asyncio.wait_for(sse.stream(base, "GET", path, headers=headers, stop_after=1), 20)


async def test_a_stream_id_outside_redis_range_is_no_id_on_the_tail_and_the_resume(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, redis_url: str
) -> None:
    # Given a chat with a turn in flight (its start part published) and a tail to read
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    chat, _ = await _chat_and_watch(client, tenant)
    base = str(client.make_url("")).rstrip("/")
    redis = aioredis.Redis.from_url(redis_url)
    turn = uuid.uuid4()
    first = await events.publish(redis, uuid.UUID(chat), turn, parts.start("msg_1"))

    for bad in BAD_STREAM_IDS:
        headers: Any = {**tenant.headers, "Last-Event-ID": bad.encode()}  # UTF-8 on the wire
        # When the resume is asked with the id: Then it streams the turn from its start
        resumed = await _first_frame(base, f"/api/chats/{chat}/stream", headers)
        assert resumed.status == 200, (bad, resumed)
        assert resumed.events[0][0] == first and resumed.types == ["start"], (bad, resumed)

        # When the tail is asked with the id: Then it streams from now (a part published
        # after it joined, never an older one); parts go out until it has one
        tailing = asyncio.ensure_future(_first_frame(base, f"/api/chats/{chat}/events", headers))
        sent: list[str] = []
        while not tailing.done():
            await asyncio.sleep(0.3)
            sent.append(await events.publish(redis, uuid.UUID(chat), turn, parts.text_start("t")))
        tail = await tailing
        assert tail.status == 200 and tail.events[0][0] in sent, (bad, tail)
    await events.publish(redis, uuid.UUID(chat), turn, parts.finish())
    await redis.aclose()
