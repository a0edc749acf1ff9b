"""OAuth test helpers: the web process on a known port (its LOOKOUT_PUBLIC_URL), a consent
step driven over the page's own API, and a hand-driven authorization-code flow."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import secrets
import socket
import urllib.parse
from typing import Any

import aiohttp
import pytest
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from lookout import app
from lookout.access import auth
from lookout.settings import Settings
from tests.integration.factories import Tenant

REDIRECT = "http://127.0.0.1:9/callback"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def lookout_base(settings: Settings, aiohttp_server: Any) -> str:
    """The running web process; its public URL is where it listens, as in production."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    await aiohttp_server(app.create_app(settings.replace(public_url=base)), port=port)
    return base


class MemoryStorage:
    """The client's token and registration store (the TokenStorage protocol)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclasses.dataclass
class Consent:
    """The person at the consent page, over the page's API: reads what asks, then allows."""

    base: str
    cookie: dict[str, str]
    workspace_id: str
    scopes: list[str] = dataclasses.field(default_factory=lambda: ["verbs:read", "jobs:read"])
    shown: dict[str, Any] | None = None
    result: AuthorizationCodeResult | None = None

    async def redirect(self, authorization_url: str) -> None:
        query = urllib.parse.urlsplit(authorization_url).query
        async with aiohttp.ClientSession(cookies=self.cookie) as http:
            async with http.get(f"{self.base}/api/oauth/authorize?{query}") as response:
                assert response.status == 200, await response.text()
                self.shown = (await response.json())["data"]
            body = {
                "query": query,
                "allow": True,
                "workspace_id": self.workspace_id,
                "scopes": self.scopes,
            }
            headers = {"Origin": self.base}
            async with http.post(
                f"{self.base}/api/oauth/authorize", json=body, headers=headers
            ) as response:
                assert response.status == 200, await response.text()
                location = (await response.json())["data"]["redirect_to"]
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
        self.result = AuthorizationCodeResult(code=params["code"], state=params.get("state"))

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def provider(base: str, consent: Consent, storage: MemoryStorage) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="Test agent",
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=consent.redirect,
        callback_handler=consent.callback,
    )


async def cookie_for(db: Any, settings: Settings, tenant: Tenant) -> dict[str, str]:
    return {auth.COOKIE: await auth.new_session(db, settings, tenant.user.id)}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclasses.dataclass
class HandFlow:
    """The authorization-code flow step by step, to try what a good client never sends."""

    base: str
    http: aiohttp.ClientSession
    cookie: dict[str, str]
    workspace_id: str
    client_id: str = ""

    async def register(self, **extra: Any) -> dict[str, Any]:
        body = {
            "client_name": "Hand client",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
            **extra,
        }
        async with self.http.post(f"{self.base}/register", json=body) as response:
            data: dict[str, Any] = await response.json()
            assert response.status == 201, data
        self.client_id = data["client_id"]
        return data

    def query(self, challenge: str, **changes: str) -> str:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": REDIRECT,
            "state": "st-1",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": f"{self.base}/mcp",
            **changes,
        }
        return urllib.parse.urlencode({k: v for k, v in params.items() if v != ""})

    async def consent_page(self, query: str) -> tuple[int, dict[str, Any]]:
        url = f"{self.base}/api/oauth/authorize?{query}"
        async with self.http.get(url, cookies=self.cookie) as response:
            return response.status, await response.json()

    async def allow(self, query: str, scopes: list[str] | None = None) -> str:
        """The code the client receives once the person allows."""
        body = {
            "query": query,
            "allow": True,
            "workspace_id": self.workspace_id,
            "scopes": scopes or ["verbs:read", "jobs:read"],
        }
        async with self.http.post(
            f"{self.base}/api/oauth/authorize",
            json=body,
            cookies=self.cookie,
            headers={"Origin": self.base},
        ) as response:
            data = await response.json()
            assert response.status == 200, data
        location = data["data"]["redirect_to"]
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))["code"]

    async def token(self, **form: str) -> tuple[int, dict[str, Any]]:
        data = {"client_id": self.client_id, **form}
        async with self.http.post(f"{self.base}/token", data=data) as response:
            return response.status, await response.json()

    async def exchange(self, code: str, verifier: str, **extra: str) -> tuple[int, dict[str, Any]]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "resource": f"{self.base}/mcp",
            **extra,
        }
        return await self.token(**form)

    async def tokens(self) -> dict[str, Any]:
        """A fresh access + refresh token pair, through the whole flow."""
        verifier, challenge = pkce()
        code = await self.allow(self.query(challenge))
        status, body = await self.exchange(code, verifier)
        assert status == 200, body
        return body

    async def mcp(
        self, access_token: str, method: str, params: Any = None
    ) -> aiohttp.ClientResponse:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        headers = {"Authorization": f"Bearer {access_token}", "MCP-Protocol-Version": "2025-11-25"}
        response = await self.http.post(f"{self.base}/mcp", json=body, headers=headers)
        await response.read()
        return response
