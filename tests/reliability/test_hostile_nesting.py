"""JSON nested deeper than Python's parser goes (found by the /mcp fuzzer: it answered 500).

Every JSON body the service reads, from a client or from a provider, is answered as invalid
input or an upstream error instead.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import asyncpg

from lookout import app
from lookout.access import auth
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.providers import ServerFactory

__all__ = ["tenant_factory"]

DEPTH = 100_000
DEEP = b"[" * DEPTH + b"]" * DEPTH
NO_BODY = {"/api/auth/logout"}  # reads no body
# The OAuth server's endpoints answer RFC 6749 / 7591 errors, not the envelope.
OAUTH = {"/token", "/revoke", "/register"}
MCP = {"Content-Type": "application/json", "Accept": "application/json"}


def _filled(path: str, workspace_id: uuid.UUID) -> str:
    """The route's path with its own workspace and unknown ids for everything else."""
    for name in ("ws", "job_id", "key_id", "chat_id", "automation_id", "connector_id",
                 "target_id"):  # fmt: skip
        path = path.replace("{" + name + "}", str(workspace_id if name == "ws" else uuid.uuid4()))
    return path


def _reads_a_body(method: str, path: str) -> bool:
    """Writes addressed by their path alone (or by the caller's own workspace)."""
    if method not in ("POST", "PATCH", "PUT", "*"):
        return False
    return "{" not in path or (path.count("{") == 1 and "{ws}" in path and method != "*")


async def test_a_too_deeply_nested_body_is_400_on_every_route_that_reads_json(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    # Given a signed-in owner (who may call every route) and the API key for /mcp
    tenant = await tenant_factory()
    client = await aiohttp_client(app.create_app(settings))
    cookie = {auth.COOKIE: await auth.new_session(db, settings, tenant.user.id)}
    origin = {"Origin": str(client.make_url("")).rstrip("/"), "Content-Type": "application/json"}
    writes = [
        route
        for route in client.server.app.router.routes()
        if _reads_a_body(route.method, route.resource.canonical)
    ]
    writes = [route for route in writes if route.resource.canonical not in NO_BODY]

    # When each of them is sent 100,000 nested arrays
    answers: dict[str, tuple[int, Any]] = {}
    for route in writes:
        path = _filled(route.resource.canonical, tenant.workspace.id)
        if route.method == "*":
            response = await client.post(path, data=DEEP, headers={**MCP, **tenant.headers})
        else:
            response = await client.request(
                route.method, path, data=DEEP, headers=origin, cookies=cookie
            )
        answers[f"{route.method} {route.resource.canonical}"] = (
            response.status, await response.json()
        )  # fmt: skip

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
