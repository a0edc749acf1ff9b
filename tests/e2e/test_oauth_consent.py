"""Connecting an agent the way Claude.ai does, through the real consent page in Chromium: the
official `mcp` client's OAuthClientProvider opens the authorization URL in the browser, the
person signs in, picks the workspace and allows; later Settings lists the agent and revokes it."""

from __future__ import annotations

import asyncio
import urllib.parse
import uuid
from typing import Any

import asyncpg
import httpx2
import pytest
from aiohttp import web
from mcp.client import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from playwright.async_api import Dialog, expect

from lookout import app
from lookout.access import accounts
from lookout.settings import Settings
from tests.e2e.conftest import PASSWORD, Bakery, Tab
from tests.integration.oauth_helpers import MemoryStorage, free_port


@pytest.fixture
async def base(settings: Settings, aiohttp_server: Any) -> str:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    await aiohttp_server(app.create_app(settings.replace(public_url=url)), port=port)
    return url


class Callback:
    """The client's redirect URI, on a local port: it receives the code (or the refusal)."""

    def __init__(self) -> None:
        self.result: asyncio.Future[AuthorizationCodeResult] = asyncio.Future()

    async def handle(self, request: web.Request) -> web.Response:
        query = request.query
        if not self.result.done():
            self.result.set_result(
                AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"))
            )
        return web.Response(text="You can close this window.", content_type="text/plain")


async def test_a_person_connects_an_agent_in_the_browser_then_revokes_it(
    base: str,
    db: asyncpg.Pool,
    desktop: Tab,
    bakery: Bakery,
    aiohttp_server: Any,
) -> None:
    # Given a Lookout account with a workspace, and a connector's callback on a local port
    email = f"person-{uuid.uuid4().hex[:8]}@example.com"
    user = await accounts.create_user(db, email=email, password=PASSWORD)
    workspace = await accounts.create_workspace(
        db, name="Bakery watch", owner_id=user.id, credits=20
    )
    callback = Callback()
    callback_app = web.Application()
    callback_app.router.add_get("/callback", callback.handle)
    callback_server = await aiohttp_server(callback_app)
    redirect = str(callback_server.make_url("/callback"))
    page = desktop.page

    async def open_in_browser(authorization_url: str) -> None:
        await page.goto(authorization_url)
        # Not signed in yet: the page asks first, then shows what asks
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("heading", name="Connect Bakery agent?")).to_be_visible()
        await expect(page.get_by_label("Workspace it works in")).to_have_value(str(workspace.id))
        await expect(page.get_by_text("verbs:read")).to_be_visible()
        await desktop.shot("consent")
        await page.get_by_role("button", name="Allow").click()
        await page.wait_for_url(redirect + "?*")

    metadata = OAuthClientMetadata(
        client_name="Bakery agent",
        redirect_uris=[redirect],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    storage = MemoryStorage()
    auth = OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=open_in_browser,
        callback_handler=lambda: callback.result,
    )

    # When the connector connects and calls a tool
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("web_scrape", {"url": bakery.url})
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["pages"][0]["title"] == "Corner Bakery opening hours"
    assert urllib.parse.urlsplit(page.url).path == "/callback"

    # Then Settings lists the agent; Revoke disconnects it at once
    await page.goto(base + "/#/settings")
    agents = page.locator("section", has=page.get_by_role("heading", name="Connected agents"))
    row = agents.locator("tr", has_text="Bakery agent")
    await expect(row).to_contain_text(email)
    await expect(row).to_contain_text("verbs:read")
    await row.scroll_into_view_if_needed()
    await desktop.shot("connected-agents")

    async def accept(dialog: Dialog) -> None:
        await dialog.accept()

    page.on("dialog", accept)
    await row.get_by_role("button", name="Revoke Bakery agent").click()
    await expect(row).to_contain_text("Revoked")
    assert storage.tokens is not None
    async with httpx2.AsyncClient() as plain:
        answer = await plain.post(
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {storage.tokens.access_token}"},
        )
    assert answer.status_code == 401
    assert desktop.errors == []
