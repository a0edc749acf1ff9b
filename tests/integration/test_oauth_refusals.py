"""What the authorization server refuses: PKCE plain or missing, a resource that is not ours,
a code used twice, a spent refresh token, a token of another workspace, a person who left."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web

from lookout.settings import Settings
from tests.integration.factories import TenantFactory, member_cookie, tenant_factory
from tests.integration.oauth_helpers import (
    REDIRECT,
    HandFlow,
    cookie_for,
    lookout_base,
    pkce,
)

__all__ = ["lookout_base", "tenant_factory"]


@pytest.fixture
async def flow(
    lookout_base: str, tenant_factory: TenantFactory, db: asyncpg.Pool, settings: Settings
) -> AsyncIterator[HandFlow]:
    tenant = await tenant_factory()
    cookie = await cookie_for(db, settings, tenant)
    async with aiohttp.ClientSession() as http:
        hand = HandFlow(lookout_base, http, cookie, str(tenant.workspace.id))
        await hand.register()
        yield hand


async def test_pkce_plain_or_missing_is_refused(flow: HandFlow) -> None:
    verifier, _ = pkce()  # with plain, the challenge is the verifier itself
    plain = flow.query(verifier, code_challenge_method="plain")
    status, body = await flow.consent_page(plain)
    assert status == 400
    assert body["error"]["details"]["oauth_error"] == "invalid_request"
    assert "S256" in body["error"]["message"]
    # The client is told too, at its redirect URI, with its state
    assert "error=invalid_request" in body["error"]["details"]["redirect_to"]
    assert "state=st-1" in body["error"]["details"]["redirect_to"]
    status, body = await flow.consent_page(flow.query("", code_challenge_method=""))
    assert status == 400 and "PKCE is required" in body["error"]["message"]


async def test_a_wrong_resource_is_refused_at_both_endpoints(flow: HandFlow) -> None:
    _, challenge = pkce()
    status, body = await flow.consent_page(
        flow.query(challenge, resource="https://elsewhere.example/mcp")
    )
    assert status == 400 and body["error"]["details"]["oauth_error"] == "invalid_target"

    verifier, challenge = pkce()
    code = await flow.allow(flow.query(challenge))
    status, body = await flow.exchange(code, verifier, resource="https://elsewhere.example/mcp")
    assert status == 400 and body["error"] == "invalid_target"


async def test_a_wrong_verifier_is_refused(flow: HandFlow) -> None:
    _, challenge = pkce()
    code = await flow.allow(flow.query(challenge))
    other_verifier, _ = pkce()
    status, body = await flow.exchange(code, other_verifier)
    assert status == 400 and body["error"] == "invalid_grant"


async def test_a_code_used_twice_is_refused_and_revokes_its_tokens(flow: HandFlow) -> None:
    verifier, challenge = pkce()
    code = await flow.allow(flow.query(challenge))
    status, first = await flow.exchange(code, verifier)
    assert status == 200
    assert (await flow.mcp(first["access_token"], "tools/list")).status == 200

    status, second = await flow.exchange(code, verifier)

    assert status == 400 and second["error"] == "invalid_grant"
    # RFC 6749 §4.1.2: what the code granted is revoked, so a stolen code is worth nothing
    assert (await flow.mcp(first["access_token"], "tools/list")).status == 401


async def test_a_spent_refresh_token_presented_again_revokes_the_grant(flow: HandFlow) -> None:
    tokens = await flow.tokens()
    status, rotated = await flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"]
    )
    assert status == 200 and rotated["refresh_token"] != tokens["refresh_token"]

    status, again = await flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"]
    )

    assert status == 400 and again["error"] == "invalid_grant"
    assert (await flow.mcp(rotated["access_token"], "tools/list")).status == 401
    status, _ = await flow.token(grant_type="refresh_token", refresh_token=rotated["refresh_token"])
    assert status == 400


async def test_a_token_of_another_workspace_sees_nothing_of_this_one(
    flow: HandFlow, tenant_factory: TenantFactory, db: asyncpg.Pool, settings: Settings
) -> None:
    # Given a job of workspace A (through its API key) and an agent connected to workspace B
    mine = await tenant_factory()
    job_id = await db.fetchval(
        "INSERT INTO jobs (workspace_id, verb, input, principal, door, request_id, status,"
        " expires_at) VALUES ($1, 'web.scrape', '{}'::jsonb, '{}'::jsonb, 'rest', 'r-1',"
        " 'succeeded', now() + interval '1 day') RETURNING id",
        mine.workspace.id,
    )
    other = await flow.tokens()

    # When the agent asks for it, it is not found
    response = await flow.mcp(
        other["access_token"],
        "tools/call",
        {"name": "jobs_get", "arguments": {"job_id": str(job_id)}},
    )
    result = json.loads(await response.text())["result"]
    assert result["isError"] is True
    assert "not_found" in result["content"][0]["text"]
    # And the workspace's connected agents list does not show other workspaces' agents
    async with flow.http.get(
        f"{flow.base}/api/workspaces/{mine.workspace.id}/oauth-agents", headers=mine.headers
    ) as listing:
        assert (await listing.json())["data"]["agents"] == []


async def test_the_token_stops_when_its_person_leaves_the_workspace(
    flow: HandFlow, db: asyncpg.Pool
) -> None:
    tokens = await flow.tokens()
    assert (await flow.mcp(tokens["access_token"], "tools/list")).status == 200

    await db.execute("DELETE FROM memberships WHERE workspace_id = $1", _uuid(flow.workspace_id))

    assert (await flow.mcp(tokens["access_token"], "tools/list")).status == 401
    status, body = await flow.token(
        grant_type="refresh_token", refresh_token=tokens["refresh_token"]
    )
    assert status == 400 and body["error"] == "invalid_grant"


async def test_scopes_limit_the_tools(flow: HandFlow) -> None:
    verifier, challenge = pkce()
    code = await flow.allow(flow.query(challenge), scopes=["jobs:read"])
    status, tokens = await flow.exchange(code, verifier)
    assert status == 200 and tokens["scope"] == "jobs:read"

    listed = await flow.mcp(tokens["access_token"], "tools/list")
    names = [tool["name"] for tool in json.loads(await listed.text())["result"]["tools"]]
    called = await flow.mcp(
        tokens["access_token"],
        "tools/call",
        {"name": "web_scrape", "arguments": {"url": "http://127.0.0.1:9/"}},
    )

    assert names == ["jobs_get"]
    result = json.loads(await called.text())["result"]
    assert result["isError"] is True and "verbs:read" in result["content"][0]["text"]


async def test_the_workspace_lists_its_agents_and_revokes_one(
    flow: HandFlow, settings: Settings
) -> None:
    tokens = await flow.tokens()
    agents_url = f"{flow.base}/api/workspaces/{flow.workspace_id}/oauth-agents"
    async with flow.http.get(agents_url, cookies=flow.cookie) as response:
        [agent] = (await response.json())["data"]["agents"]
    assert agent["client_name"] == "Hand client"
    assert agent["scopes"] == ["verbs:read", "jobs:read"]

    async with flow.http.delete(
        f"{agents_url}/{agent['id']}", cookies=flow.cookie, headers={"Origin": flow.base}
    ) as response:
        assert response.status == 200
        assert (await response.json())["data"]["agent"]["revoked_at"] is not None

    assert (await flow.mcp(tokens["access_token"], "tools/list")).status == 401


async def test_registration_is_validated_and_rate_limited(
    flow: HandFlow, settings: Settings
) -> None:
    async def register(body: Any) -> tuple[int, dict[str, Any]]:
        async with flow.http.post(f"{flow.base}/register", json=body) as response:
            return response.status, await response.json()

    status, body = await register({"redirect_uris": ["http://attacker.example/cb"]})
    assert status == 400 and body["error"] == "invalid_client_metadata"
    status, body = await register({"redirect_uris": ["javascript:alert(1)"]})
    assert status == 400 and body["error"] == "invalid_client_metadata"
    status, body = await register(
        {"redirect_uris": ["https://ok.example/cb"], "grant_types": ["password"]}
    )
    assert status == 400
    status, body = await register({"redirect_uris": ["https://ok.example/cb"]})
    assert status == 201 and body["client_secret"]  # RFC 7591 default: client_secret_basic
    statuses = [
        (await register({"redirect_uris": ["https://ok.example/cb"]}))[0] for _ in range(12)
    ]
    assert 429 in statuses


async def test_discovery_documents(flow: HandFlow) -> None:
    async with flow.http.get(f"{flow.base}/.well-known/oauth-protected-resource/mcp") as r:
        resource = await r.json()
    async with flow.http.get(f"{flow.base}/.well-known/oauth-authorization-server") as r:
        server = await r.json()
    assert resource["resource"] == f"{flow.base}/mcp"
    assert resource["authorization_servers"] == [flow.base]
    assert server["issuer"] == flow.base
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["registration_endpoint"] == f"{flow.base}/register"
    assert server["client_id_metadata_document_supported"] is True


async def test_a_client_id_metadata_document_is_read_and_checked(
    flow: HandFlow, aiohttp_server: Any
) -> None:
    documents: dict[str, dict[str, Any]] = {}

    async def document(request: web.Request) -> web.Response:
        return web.json_response(documents[request.path])

    app = web.Application()
    app.router.add_get("/{name}", document)
    server = await aiohttp_server(app)
    good, liar = str(server.make_url("/agent.json")), str(server.make_url("/liar.json"))
    documents["/agent.json"] = {
        "client_id": good,
        "client_name": "Documented agent",
        "redirect_uris": ["http://127.0.0.1:9/callback"],
    }
    documents["/liar.json"] = {**documents["/agent.json"], "client_id": good}

    flow.client_id = good
    _, challenge = pkce()
    status, body = await flow.consent_page(flow.query(challenge))
    assert status == 200, body
    assert body["data"]["client"] == {
        "id": good,
        "name": "Documented agent",
        "uri": None,
        "verified_by_url": True,
    }
    flow.client_id = liar
    status, body = await flow.consent_page(flow.query(challenge))
    assert status == 400 and body["error"]["details"]["oauth_error"] == "invalid_client"


def _uuid(text: str) -> uuid.UUID:
    return uuid.UUID(text)


async def test_denying_sends_the_client_access_denied(flow: HandFlow) -> None:
    _, challenge = pkce()
    body = {"query": flow.query(challenge), "allow": False}
    async with flow.http.post(
        f"{flow.base}/api/oauth/authorize",
        json=body,
        cookies=flow.cookie,
        headers={"Origin": flow.base},
    ) as response:
        data = await response.json()
    assert response.status == 200 and data["data"]["allowed"] is False
    location = data["data"]["redirect_to"]
    assert location.startswith(REDIRECT + "?")
    assert "error=access_denied" in location and "state=st-1" in location
    assert "code=" not in location


async def test_a_viewer_may_not_let_an_agent_spend_credits(
    flow: HandFlow, db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory
) -> None:
    owner = await tenant_factory()
    viewer = await member_cookie(db, settings, owner, role="viewer")
    flow.cookie, flow.workspace_id = viewer, str(owner.workspace.id)
    _, challenge = pkce()
    body = {
        "query": flow.query(challenge),
        "allow": True,
        "workspace_id": flow.workspace_id,
        "scopes": ["verbs:read", "jobs:read"],
    }
    async with flow.http.post(
        f"{flow.base}/api/oauth/authorize", json=body, cookies=viewer, headers={"Origin": flow.base}
    ) as response:
        refused = await response.json()
    assert response.status == 403 and "editor" in refused["error"]["message"]
    code = await flow.allow(flow.query(challenge), scopes=["jobs:read"])
    assert code


async def test_the_consent_answer_needs_our_own_page(flow: HandFlow) -> None:
    _, challenge = pkce()
    body = {"query": flow.query(challenge), "allow": True, "workspace_id": flow.workspace_id}
    async with flow.http.post(
        f"{flow.base}/api/oauth/authorize",
        json=body,
        cookies=flow.cookie,
        headers={"Origin": "https://evil.example"},
    ) as response:
        assert response.status == 403


async def test_an_access_token_is_for_the_mcp_endpoint_only(flow: HandFlow) -> None:
    tokens = await flow.tokens()
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    async with flow.http.get(f"{flow.base}/v1/usage", headers=headers) as response:
        assert response.status == 401
    async with flow.http.get(f"{flow.base}/api/me", headers=headers) as response:
        assert response.status == 401


async def test_a_malformed_content_type_at_the_token_endpoint_is_a_refusal(flow: HandFlow) -> None:
    # The standard library's header parser (through aiohttp's request.post()) raised IndexError
    # on a parameter with no `=`: a 500. Now the form is read (or not) and refused as OAuth says.
    verifier, challenge = pkce()
    code = await flow.allow(flow.query(challenge))
    form = urllib.parse.urlencode(
        {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
         "code_verifier": verifier, "resource": f"{flow.base}/mcp", "client_id": flow.client_id}
    )  # fmt: skip
    answers = []
    for content_type in ("yO]zX<8;C5*", "application/x-www-form-urlencoded;C5*"):
        async with flow.http.post(
            f"{flow.base}/token", data=form, headers={"Content-Type": content_type}
        ) as response:
            answers.append((response.status, (await response.json())))

    assert answers[0][0] == 400 and answers[0][1]["error"] == "unsupported_grant_type"  # no form
    assert answers[1][0] == 200 and answers[1][1]["token_type"].lower() == "bearer"
