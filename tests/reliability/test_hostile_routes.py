"""Hostile input on the routes the OpenAPI document does not cover (so Schemathesis never sends
them anything): chats, messages, watches, notification targets, MCP connectors.

Every route that takes a body gets a valid-looking body with each field in turn replaced by a
hostile value (wrong types, null, huge, deep, NUL, a lone surrogate) plus bodies that are not
objects at all; every path id gets malformed ids; every listing gets malformed paging. Held: no
5xx, and every refusal is the error envelope with a code. The bodies never form a valid turn,
so no turn runs.
"""

from __future__ import annotations

import collections
import json
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.settings import Settings
from tests.integration import factories
from tests.integration.factories import TenantFactory, member_cookie, tenant_factory
from tests.reliability.hostile_fixtures import write_figures

__all__ = ["tenant_factory"]

pytestmark = pytest.mark.slow

TITLE = "Hostile input on routes outside OpenAPI"
WHAT = (
    "Chats, messages (plain and useChat bodies), watches, notification targets and MCP "
    "connectors: each body field replaced by 17 hostile values and 300-deep nesting, an unknown "
    "key, 8 bodies that are not objects; 5 malformed ids on 15 id routes; 9 malformed paging "
    "queries on 4 listings; 5 malformed Last-Event-ID. Held: not 5xx, and a refusal is the "
    "error envelope."
)

HOSTILE_VALUES: list[Any] = [
    None, 0, -1, 1e308, True, "", "x" * 100_000, [], {}, ["a"], {"$ne": 1},
    "\u0000", "a\u0000b", "\ud800", "../../etc/passwd", "<script>alert(1)</script>",
    "9" * 400,
]  # fmt: skip
NOT_OBJECTS = [b"", b"not json", b"[]", b"null", b'"text"', b"1", b"{", b'{"a":' * 200]
BAD_IDS = ["not-a-uuid", "0", "%00", "x" * 300, "00000000-0000-0000-0000-00000000000g"]
BAD_PAGING = [
    {"limit": "-1"}, {"limit": "0"}, {"limit": "abc"}, {"limit": "99999999999999999999"},
    {"offset": "-5"}, {"offset": "1e9"}, {"after": "abc"}, {"after": "-1"},
    {"after": "99999999999999999999"},
]  # fmt: skip


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


def mutations(valid: dict[str, Any]) -> list[bytes]:
    """Bodies: each field replaced by each hostile value, an unknown key, not-objects."""
    bodies = [
        json.dumps({**valid, key: value}).encode() for key in valid for value in HOSTILE_VALUES
    ]
    bodies += [json.dumps({**valid, key: nested(300)}).encode() for key in valid]
    bodies += [json.dumps({**valid, "unknown_key": 1}).encode(), *NOT_OBJECTS]
    return bodies


@pytest.mark.timeout(600)
async def test_hostile_input_on_routes_outside_openapi_never_500s(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    # Given a workspace with a chat and a watch, a session cookie and an API key
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory(credits=10)
    ws = str(tenant.workspace.id)
    cookie = await member_cookie(db, settings, tenant, role="owner")
    origin = factories.page_origin(client)
    session = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookie.items()), "Origin": origin}
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat = (await created.json())["data"]["id"]
    watched = await client.post(
        "/api/automations/watches", headers=tenant.headers,
        json={"chat_id": chat, "message": "what is new on example.com", "cadence": "0 9 * * *"},
    )  # fmt: skip
    assert watched.status == 201, await watched.text()
    watch = (await watched.json())["data"]["id"]

    bodies: dict[tuple[str, str], dict[str, Any]] = {
        ("POST", "/api/chats"): {"title": "t"},
        ("PATCH", f"/api/chats/{chat}"): {"title": "t"},
        ("POST", f"/api/chats/{chat}/messages"): {"text": "hi"},
        ("POST", "/api/automations/watches"): {
            "chat_id": chat, "message": "what is new", "cadence": "0 9 * * *", "timezone": "UTC",
        },
        ("PATCH", f"/api/automations/{watch}"): {"notify": {"enabled": True}},
        ("POST", f"/api/workspaces/{ws}/notification-targets"): {
            "name": "n", "url": "https://hooks.example.com/x", "default": False,
        },
        ("POST", f"/api/workspaces/{ws}/mcp-connectors"): {
            "name": "c", "url": "https://mcp.example.com/mcp", "headers": {},
        },
    }  # fmt: skip
    use_chat = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
    by_id = [
        ("GET", "/api/chats/{id}"), ("PATCH", "/api/chats/{id}"), ("DELETE", "/api/chats/{id}"),
        ("GET", "/api/chats/{id}/messages"), ("POST", "/api/chats/{id}/messages"),
        ("GET", "/api/chats/{id}/stream"), ("GET", "/api/chats/{id}/events"),
        ("POST", "/api/automations/{id}/run"), ("DELETE", "/api/automations/{id}"),
        ("PATCH", "/api/automations/{id}"), ("GET", "/api/automations/{id}/runs"),
        ("DELETE", f"/api/workspaces/{ws}/notification-targets/{{id}}"),
        ("POST", f"/api/workspaces/{ws}/notification-targets/{{id}}/test"),
        ("DELETE", f"/api/workspaces/{ws}/mcp-connectors/{{id}}"),
        ("POST", f"/api/workspaces/{ws}/mcp-connectors/{{id}}/test"),
    ]  # fmt: skip
    listings = ["/api/chats", f"/api/chats/{chat}/messages", "/api/automations/watches",
                f"/api/automations/{watch}/runs"]  # fmt: skip

    cases: list[tuple[str, str, bytes | None, dict[str, str]]] = []
    for (method, path), valid in bodies.items():
        cases += [(method, path, body, session) for body in mutations(valid)]
    cases += [
        ("POST", f"/api/chats/{chat}/messages", body, session)
        for body in mutations(use_chat)[: -len(NOT_OBJECTS)]
    ]
    cases += [(m, p.replace("{id}", bad), b"{}", session) for m, p in by_id for bad in BAD_IDS]
    cases += [
        ("GET", f"{path}?{'&'.join(f'{k}={v}' for k, v in query.items())}", None, tenant.headers)
        for path in listings for query in BAD_PAGING
    ]  # fmt: skip
    cases += [
        ("GET", f"/api/chats/{chat}/stream", None, {**tenant.headers, "Last-Event-ID": bad})
        for bad in ["x", "1-", "-1-1", "9" * 40 + "-0", "\u00e9"]
    ]

    # When every case is sent
    outcomes: collections.Counter[str] = collections.Counter()
    broken: list[str] = []
    for method, path, body, headers in cases:
        sent = {**headers, "Content-Type": "application/json"} if body is not None else headers
        async with client.request(method, path, data=body, headers=sent) as response:
            raw = await response.read()
        outcomes[str(response.status)] += 1
        label = f"{method} {path[:80]} {(body or b'')[:60]!r} -> {response.status}"
        if response.status >= 500:
            broken.append(label)
        elif response.status >= 400:
            try:
                code = json.loads(raw)["error"]["code"]
            except (ValueError, KeyError, TypeError):
                broken.append(label + " (not the envelope)")
            else:
                outcomes[code] += 1

    # Then nothing answered 5xx, and every refusal was the envelope
    write_figures("hostile-routes", {
        "title": TITLE, "what": WHAT, "tried": len(cases), "held": len(cases) - len(broken),
        "outcomes": dict(outcomes), "broken": broken[:50],
    })  # fmt: skip
    assert broken == []
    assert len(cases) >= 400 and outcomes["invalid_input"] >= 300
