"""Sign in as a remote MCP connector would: the official `mcp` client's OAuthClientProvider
against the running web process — discovery, registration, consent, token, tools, refresh,
revocation."""

from __future__ import annotations

import time
from typing import Any

import aiohttp
import asyncpg
import httpx2
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from lookout.settings import Settings
from tests.integration.factories import Site, TenantFactory, site, tenant_factory
from tests.integration.oauth_helpers import (
    Consent,
    MemoryStorage,
    cookie_for,
    lookout_base,
    provider,
)

__all__ = ["lookout_base", "site", "tenant_factory"]


async def test_a_connector_signs_in_calls_tools_refreshes_and_is_revoked(
    lookout_base: str,
    tenant_factory: TenantFactory,
    db: asyncpg.Pool,
    settings: Settings,
    site: Site,
) -> None:
    # Given a signed-in person with a workspace, and a connector that knows only the URL
    tenant = await tenant_factory(credits=50)
    cookie = await cookie_for(db, settings, tenant)
    consent = Consent(lookout_base, cookie, str(tenant.workspace.id))
    storage = MemoryStorage()
    auth = provider(lookout_base, consent, storage)

    # When it connects: a 401, discovery, registration, the consent step, the token
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        streamable_http_client(f"{lookout_base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        result = await session.call_tool("web_scrape", {"url": site.url("/pricing")})

        # Then the consent page named the client and the workspace, and the tools work
        assert consent.shown is not None
        assert consent.shown["client"]["name"] == "Test agent"
        assert [w["id"] for w in consent.shown["workspaces"]] == [str(tenant.workspace.id)]
        assert {s["name"] for s in consent.shown["scopes"]} == {"verbs:read", "jobs:read"}
        assert "web_scrape" in [tool.name for tool in listed.tools]
        assert not result.is_error, result
        assert result.structured_content is not None
        assert result.structured_content["pages"][0]["title"] == "pricing"
        first = storage.tokens
        assert first is not None and first.access_token.startswith("lko_")
        assert first.expires_in is not None and first.expires_in <= 3600

        # When the access token expires, the client refreshes it (rotation) and goes on
        auth.context.token_expiry_time = time.time() - 1
        await session.list_tools()
        second = storage.tokens
        assert second is not None and second.access_token != first.access_token
        assert second.refresh_token and second.refresh_token != first.refresh_token

    balance = await db.fetchval(
        "SELECT balance FROM credit_balances WHERE workspace_id = $1", tenant.workspace.id
    )
    assert balance == 49  # metered like a key: one page, one credit

    async with aiohttp.ClientSession() as plain:
        # The spent refresh token is refused
        form = {"grant_type": "refresh_token", "refresh_token": first.refresh_token or ""}
        form["client_id"] = storage.client.client_id if storage.client else ""
        async with plain.post(f"{lookout_base}/token", data=form) as response:
            assert response.status == 400
            assert (await response.json())["error"] == "invalid_grant"
        # And once the client revokes its refresh token (RFC 7009), its access token is dead
        revoke = {"token": second.refresh_token or "", "client_id": form["client_id"]}
        async with plain.post(f"{lookout_base}/revoke", data=revoke) as response:
            assert response.status == 200
        answer = await _mcp(plain, lookout_base, second.access_token)
        assert answer.status == 401
        challenge = answer.headers["WWW-Authenticate"]
        metadata_url = f"{lookout_base}/.well-known/oauth-protected-resource/mcp"
        assert f'resource_metadata="{metadata_url}"' in challenge
        assert 'error="invalid_token"' in challenge


async def _mcp(http: aiohttp.ClientSession, base: str, token: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-11-25"}
    response = await http.post(f"{base}/mcp", json=body, headers=headers)
    await response.read()
    return response
