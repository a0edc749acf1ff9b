"""The rules of POST /mcp over raw HTTP: methods, Origin, auth, versions, JSON-RPC errors, sizes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.auth import ProtectedResourceMetadata

from lookout import app
from lookout.settings import Settings
from tests.integration import factories
from tests.integration.factories import Tenant, TenantFactory, tenant_factory

__all__ = ["tenant_factory"]

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
async def client(settings: Settings, aiohttp_client: Any) -> Any:
    return await aiohttp_client(app.create_app(settings.replace(max_body_bytes=4096)))


@pytest.fixture
async def tenant(tenant_factory: TenantFactory) -> Tenant:
    return await tenant_factory()


def headers(tenant: Tenant, **extra: str) -> dict[str, str]:
    return {**JSON, **tenant.headers, **extra}


async def post(client: Any, body: Any, hdrs: dict[str, str]) -> tuple[int, Any]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = await client.post("/mcp", data=raw, headers=hdrs)
    text = await response.text()
    return response.status, (json.loads(text) if text else None)


def request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    return message if params is None else {**message, "params": params}


INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_only_post_is_allowed(client: Any, tenant: Tenant, method: str) -> None:
    response = await client.request(method, "/mcp", headers=headers(tenant))

    assert response.status == 405
    assert response.headers["Allow"] == "POST"


async def test_a_foreign_origin_is_refused_and_our_own_is_not(client: Any, tenant: Tenant) -> None:
    own = factories.page_origin(client)

    foreign, _ = await post(client, request("ping"), headers(tenant, Origin="https://evil.test"))
    same, body = await post(client, request("ping"), headers(tenant, Origin=own))

    assert foreign == 403
    assert same == 200 and body == {"jsonrpc": "2.0", "id": 7, "result": {}}


async def test_an_origin_that_only_matches_a_forged_host_is_refused(
    client: Any, tenant: Tenant
) -> None:
    # A page on evil.test that also sets Host: evil.test (a DNS-rebound name does) must not pass
    # as our own page: our origin is LOOKOUT_PUBLIC_URL's, whatever the Host header says.
    forged = headers(tenant, Origin="http://evil.test", Host="evil.test")

    status, body = await post(client, request("ping"), forged)

    assert status == 403 and "evil.test" in body["error"]["message"]


async def test_the_metadata_names_the_public_url_whatever_the_host_header_says(
    client: Any, settings: Settings
) -> None:
    forged = {"Host": "evil.test", "X-Forwarded-Host": "evil.test"}

    document = await (
        await client.get("/.well-known/oauth-protected-resource", headers=forged)
    ).json()
    challenge = (
        await client.post("/mcp", json=request("ping"), headers={**JSON, **forged})
    ).headers

    assert document["resource"] == f"{settings.public_url}/mcp"
    assert document["authorization_servers"] == [settings.public_url]
    assert "evil.test" not in json.dumps(document) + challenge["WWW-Authenticate"]


async def test_no_key_is_401_with_a_challenge_that_leads_to_the_metadata(
    client: Any, settings: Settings
) -> None:
    response = await client.post("/mcp", json=request("initialize", INITIALIZE), headers=JSON)

    assert response.status == 401
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer resource_metadata="http://')
    metadata_url = challenge.split('"')[1]
    # at the configured public URL (the test app is served elsewhere: ask it for the same path)
    assert metadata_url == f"{settings.public_url}/.well-known/oauth-protected-resource/mcp"
    metadata = await client.get(metadata_url.removeprefix(settings.public_url))
    document = ProtectedResourceMetadata.model_validate(await metadata.json())
    assert str(document.resource).endswith("/mcp")
    assert document.bearer_methods_supported == ["header"]


async def test_a_wrong_key_is_401_invalid_token(client: Any) -> None:
    wrong = {**JSON, "Authorization": "Bearer lk_not_a_real_key_at_all_000000"}

    status, body = await post(client, request("ping"), wrong)

    assert status == 401
    assert body["error"]["message"] == "This API key is not valid or has been revoked."


async def test_the_root_metadata_document_describes_the_same_resource(client: Any) -> None:
    root = await (await client.get("/.well-known/oauth-protected-resource")).json()
    pathed = await (await client.get("/.well-known/oauth-protected-resource/mcp")).json()

    assert root == pathed
    assert root["authorization_servers"]


@pytest.mark.parametrize(
    ("wanted", "agreed"),
    [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-11-05", "2025-11-25")],
)
async def test_initialize_negotiates_the_version(
    client: Any, tenant: Tenant, wanted: str, agreed: str
) -> None:
    params = {**INITIALIZE, "protocolVersion": wanted}

    status, body = await post(client, request("initialize", params), headers(tenant))

    assert status == 200
    assert body["result"]["protocolVersion"] == agreed
    assert body["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert "Mcp-Session-Id" not in body


async def test_the_protocol_version_header_is_checked(client: Any, tenant: Tenant) -> None:
    bad, body = await post(
        client, request("ping"), headers(tenant, **{"MCP-Protocol-Version": "1999-01-01"})
    )
    good, _ = await post(
        client, request("ping"), headers(tenant, **{"MCP-Protocol-Version": "2025-06-18"})
    )
    absent, _ = await post(client, request("ping"), headers(tenant))

    assert bad == 400 and "2025-06-18, 2025-11-25" in body["error"]["message"]
    assert (good, absent) == (200, 200)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
    ],
)
async def test_notifications_and_responses_are_accepted_with_202(
    client: Any, tenant: Tenant, message: dict[str, Any]
) -> None:
    response = await client.post("/mcp", json=message, headers=headers(tenant))

    assert response.status == 202
    assert await response.read() == b""


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700),
        (b"\xff\xfe", 400, -32700),
        ([request("ping"), request("ping")], 400, -32600),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 400, -32600),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, 400, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}, 400, -32600),
        (request("resources/list"), 200, -32601),
        (request("server/discover"), 200, -32601),
        (request("tools/call", {"arguments": {}}), 200, -32602),
        (request("tools/call", {"name": "nope", "arguments": {}}), 200, -32602),
        (request("tools/list", {"cursor": "not-ours"}), 200, -32602),
        (request("initialize", {"protocolVersion": "2025-06-18"}), 200, -32602),
        (
            request("tools/call", {"name": "web_scrape", "arguments": {"url": "a\u0000"}}),
            400,
            -32602,
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud800"}}', 400, -32602),
    ],
)
async def test_json_rpc_errors_never_a_500(
    client: Any, tenant: Tenant, body: Any, status: int, code: int
) -> None:
    got, answer = await post(client, body, headers(tenant))

    assert got == status
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code
    assert answer["error"]["message"]


async def test_a_body_over_the_limit_is_413(client: Any, tenant: Tenant) -> None:
    huge = request("tools/call", {"name": "web_scrape", "arguments": {"url": "x" * 5000}})

    status, body = await post(client, huge, headers(tenant))

    assert status == 413 and "4096 bytes" in body["error"]["message"]


async def test_a_body_that_is_not_json_typed_is_415(client: Any, tenant: Tenant) -> None:
    status, _ = await post(
        client, request("ping"), headers(tenant, **{"Content-Type": "text/plain"})
    )

    assert status == 415
