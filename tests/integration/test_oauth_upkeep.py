"""OAuth upkeep and limits: agents are rate limited like keys, metadata documents go through the
SSRF guard, unused clients and dead codes are swept."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import asyncpg
import pytest

from lookout import app
from lookout.db import oauth as oauth_db
from lookout.settings import Settings
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.oauth_helpers import HandFlow, cookie_for, free_port, pkce

__all__ = ["tenant_factory"]


@pytest.fixture
async def started(
    settings: Settings, aiohttp_server: Any, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> Any:
    async def start(**changes: Any) -> AsyncIterator[HandFlow]:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        configured = settings.replace(public_url=base, **changes)
        await aiohttp_server(app.create_app(configured), port=port)
        tenant = await tenant_factory()
        cookie = await cookie_for(db, settings, tenant)
        async with aiohttp.ClientSession() as http:
            yield HandFlow(base, http, cookie, str(tenant.workspace.id))

    return start


async def test_an_agent_is_rate_limited_like_a_key(started: Any) -> None:
    async for flow in started(rate_limit_per_minute=1):
        await flow.register()
        tokens = await flow.tokens()
        call = {"name": "web_scrape", "arguments": {"url": "http://127.0.0.1:9/"}}
        first = await flow.mcp(tokens["access_token"], "tools/call", call)
        second = await flow.mcp(tokens["access_token"], "tools/call", call)
        texts = [
            json.loads(await r.text())["result"]["content"][0]["text"] for r in (first, second)
        ]
        assert "rate_limited" not in texts[0]
        assert "rate_limited" in texts[1]


async def test_a_metadata_document_on_a_private_address_is_never_fetched(
    started: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async for flow in started(allow_private_networks=False):
        flow.client_id = "https://127.0.0.1:1/agent.json"
        _, challenge = pkce()
        with caplog.at_level(logging.INFO, logger="lookout.access.oauth_clients"):
            status, body = await flow.consent_page(flow.query(challenge))
        assert status == 400 and body["error"]["details"]["oauth_error"] == "invalid_client"
        # refused by the fetcher's address rules, not by a failed connection
        assert "127.0.0.1 is a loopback address" in caplog.text
        flow.client_id = "http://agent.example/agent.json"  # plain http: not a document URL
        status, body = await flow.consent_page(flow.query(challenge))
        assert status == 400 and body["error"]["details"]["oauth_error"] == "invalid_client"


async def test_unused_clients_and_dead_codes_are_swept(started: Any, db: asyncpg.Pool) -> None:
    async for flow in started():
        kept = (await flow.register())["client_id"]
        await flow.tokens()  # a live grant keeps its client
        idle = (await flow.register())["client_id"]
        never = (await flow.register())["client_id"]
        _, challenge = pkce()
        await flow.allow(flow.query(challenge))  # a code never redeemed
        await db.execute(
            "UPDATE oauth_clients SET created_at = now() - interval '40 days',"
            " last_used_at = CASE WHEN client_id = $2 THEN NULL"
            " ELSE now() - interval '40 days' END WHERE client_id = ANY($1)",
            [kept, idle],
            idle,
        )
        await db.execute(
            "UPDATE oauth_clients SET created_at = now() - interval '2 days' WHERE client_id = $1",
            never,
        )
        await db.execute("UPDATE oauth_codes SET expires_at = now() - interval '2 days'")

        counts = await oauth_db.delete_expired(db, unused_client_days=30)

        left = {r["client_id"] for r in await db.fetch("SELECT client_id FROM oauth_clients")}
        assert left == {kept}
        assert counts["oauth_clients"] == 2 and counts["oauth_codes"] >= 1
