"""JSON nested deeper than Python's parser goes (found by the /mcp fuzzer: it answered 500).

Every JSON body the service reads, from a client or from a provider, is answered as invalid
input or an upstream error instead.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import asyncpg

from lookout import app
from lookout.access import auth
from lookout.settings import Settings
from tests.integration import factories, providers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.providers import ServerFactory
from tests.reliability import hostile_fixtures

__all__ = ["tenant_factory"]

DEPTH = 100_000
DEEP = b"[" * DEPTH + b"]" * DEPTH
# The OAuth server's endpoints answer RFC 6749 / 7591 errors, not the envelope.
OAUTH = {"/token", "/revoke", "/register"}
MCP = {"Content-Type": "application/json", "Accept": "application/json"}


async def test_a_too_deeply_nested_body_is_400_on_every_route_that_reads_json(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    # Given a signed-in owner (who may call every route) and the API key for /mcp
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    cookie = {auth.COOKIE: await auth.new_session(db, settings, tenant.user.id)}
    origin = {"Origin": factories.page_origin(client), "Content-Type": "application/json"}
    writes = hostile_fixtures.body_routes(client.server.app)

    # When each of them is sent 100,000 nested arrays
    answers: dict[str, tuple[int, Any]] = {}
    for method, canonical in writes:
        path = hostile_fixtures.fill_path(canonical, tenant.workspace.id)
        if method == "*":
            response = await client.post(path, data=DEEP, headers={**MCP, **tenant.headers})
        else:
            response = await client.request(method, path, data=DEEP, headers=origin,
                                             cookies=cookie)  # fmt: skip
        answers[f"{method} {canonical}"] = (response.status, await response.json())

    # Then every one says the body is not JSON
    assert len(answers) >= 10, answers.keys()
    for name, (status, body) in answers.items():
        if name.split(" ", 1)[1] in OAUTH:  # forms read no JSON; /register reads 16 KiB at most
            assert status in (400, 401, 413) and isinstance(body["error"], str), (name, body)
            continue
        assert status == 400, (name, status, body)
        error = body["error"]
        assert error["code"] == (-32700 if name == "* /mcp" else "invalid_input"), (name, body)


async def test_a_tools_list_cursor_hiding_deep_json_is_invalid_params(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    cursor = base64.urlsafe_b64encode(b"[" * 50_000).decode()
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": cursor}}

    response = await client.post("/mcp", json=message, headers={**MCP, **tenant.headers})

    assert response.status == 200
    assert (await response.json())["error"]["code"] == -32602


async def test_a_provider_answering_deep_json_is_an_upstream_error(
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    aiohttp_server: ServerFactory,
) -> None:
    osm = providers.FakeNominatim()
    await providers.serve(osm, aiohttp_server)
    osm.fail_with(200, DEEP.decode())
    tenant = await tenant_factory()
    client = await aiohttp_client(
        app.create_app(settings.replace(nominatim_url=osm.url, maps_cache_ttl_s=0))
    )

    response = await client.post(
        "/v1/maps/search", json={"query": "cafe", "near": "Berlin"}, headers=tenant.headers
    )

    body = await response.json()
    assert response.status == 502, body
    assert body["error"]["code"] == "upstream_error"
    assert "not JSON" in body["error"]["message"]
    assert json.dumps(body).count("[[[") == 0
