"""A workspace's own MCP servers: register, list, test, call through the agent API, SSRF, roles."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from lookout import app, appkeys, errors
from lookout.access.principals import Principal
from lookout.mcp import connectors, tool_cache, toolbox
from lookout.settings import Settings
from tests.integration import factories
from tests.integration.factories import Tenant, TenantFactory, member_cookie, tenant_factory

__all__ = ["tenant_factory"]

SECRET = "Bearer connector-secret-6d1f"


@dataclasses.dataclass
class Remote:
    """A real MCP server (the `mcp` package's) on a loopback port, demanding SECRET."""

    url: str
    requests: int = 0
    queries: list[bytes] = dataclasses.field(default_factory=list)
    erased: list[str] = dataclasses.field(default_factory=list)  # what the write tool was told


def _remote_app(remote: Remote) -> Any:
    server: MCPServer[Any] = MCPServer("remote-test")

    @server.tool()
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    @server.tool()
    def big() -> str:
        """A very long answer."""
        return "word " * 20_000

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return "done"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def lookup(key: str) -> str:
        """Read a value (read-only)."""
        return f"value of {key}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
    def erase(what: str) -> str:
        """Delete data for good (writes)."""
        remote.erased.append(what)
        return f"erased {what}"

    @server.tool()
    def broken() -> str:
        """Always fails."""
        raise ToolError("the remote tool broke")

    inner = server.streamable_http_app(json_response=True, stateless_http=True)

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            remote.requests += 1
            remote.queries.append(scope["query_string"])
            given = dict(scope["headers"]).get(b"authorization", b"").decode()
            if given != SECRET:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await inner(scope, receive, send)

    return guarded


@pytest.fixture(scope="module")
def remote() -> Iterator[Remote]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    state = Remote(url=f"http://127.0.0.1:{port}/mcp")
    config = uvicorn.Config(
        _remote_app(state),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield state
    server.should_exit = True
    thread.join(10)


@pytest.fixture
async def client(settings: Settings, aiohttp_client: Any) -> Any:
    return await aiohttp_client(app.create_app(settings))


def path(tenant: Tenant, tail: str = "") -> str:
    return f"/api/workspaces/{tenant.workspace.id}/mcp-connectors{tail}"


def principal_of(tenant: Tenant, role: str = "editor") -> Principal:
    return Principal(kind="session", workspace_id=tenant.workspace.id, role=role)


async def register(
    client: Any, tenant: Tenant, url: str, *, chat_use: bool = True, **headers: str
) -> Any:
    body = {"name": "remote", "url": url, "headers": headers, "chat_use": chat_use}
    return await client.post(path(tenant), json=body, headers=tenant.headers)


async def test_a_registered_server_is_tested_listed_and_called_by_the_agent(
    client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    # Given a connector registered with the header its server demands
    tenant = await tenant_factory()
    created = await register(client, tenant, remote.url, Authorization=SECRET)
    body = await created.json()
    assert created.status == 201, body
    connector = body["data"]["connector"]
    assert connector["headers"] == {"Authorization": "***"}
    assert connector["headers_readable"] is True

    # When it is tested, and the agent lists and calls its tools
    tested = await client.post(path(tenant, f"/{connector['id']}/test"), headers=tenant.headers)
    services = appkeys.services(client.app)
    offered = await toolbox.tools_for(services, principal_of(tenant))
    shout = toolbox.find(offered, "remote__shout")
    assert shout is not None
    result = await toolbox.call(services, principal_of(tenant), shout, {"text": "hi there"})

    # Then the server's tools are listed and the call answers
    tools = (await tested.json())["data"]["tools"]
    assert {tool["name"] for tool in tools} == {"shout", "big", "slow", "lookup", "erase", "broken"}
    assert shout.description == "Upper-case the text."
    assert shout.input_schema["properties"]["text"]["type"] == "string"
    assert result.is_error is False and result.text == "HI THERE"


async def test_headers_are_sealed_at_rest_and_never_shown(
    client: Any, tenant_factory: TenantFactory, remote: Remote, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory()
    await register(client, tenant, remote.url, Authorization=SECRET)

    stored = await db.fetchval("SELECT headers_encrypted FROM mcp_connectors")
    listed = await client.get(path(tenant), headers=tenant.headers)

    assert stored and b"connector-secret" not in bytes(stored)
    assert "connector-secret" not in await listed.text()
    assert (await listed.json())["data"]["connectors"][0]["headers"] == {"Authorization": "***"}


async def test_a_url_is_sealed_at_rest_shown_as_scheme_and_host_and_used_whole(
    client: Any, tenant_factory: TenantFactory, remote: Remote, db: asyncpg.Pool
) -> None:
    # Given a connector whose URL carries a token in its query
    tenant = await tenant_factory()
    secret_url = remote.url + "?token=url-secret-9a7e"
    created = await register(client, tenant, secret_url, Authorization=SECRET)
    body = await created.json()
    assert created.status == 201, body

    # When it is listed, tested and called by the agent
    listed = await client.get(path(tenant), headers=tenant.headers)
    connector_id = body["data"]["connector"]["id"]
    tested = await client.post(path(tenant, f"/{connector_id}/test"), headers=tenant.headers)
    services = appkeys.services(client.app)
    shout = toolbox.find(await toolbox.tools_for(services, principal_of(tenant)), "remote__shout")
    assert shout is not None
    result = await toolbox.call(services, principal_of(tenant), shout, {"text": "hi"})

    # Then it is shown as scheme + host only, stored sealed, and the server got the whole URL
    shown = remote.url.removesuffix("/mcp")
    assert body["data"]["connector"]["url"] == shown
    assert (await listed.json())["data"]["connectors"][0]["url"] == shown
    for text in (await listed.text(), await tested.text(), json.dumps(body)):
        assert "url-secret" not in text and "/mcp" not in text
    row = await db.fetchrow("SELECT url, url_sealed FROM mcp_connectors")
    assert row["url"] == shown and b"url-secret" not in bytes(row["url_sealed"])
    assert tested.status == 200 and result.text == "HI"
    assert remote.queries[-1] == b"token=url-secret-9a7e"


async def test_a_failure_never_says_the_path_or_query_of_the_url(
    client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    tenant = await tenant_factory()
    created = await (await register(client, tenant, remote.url + "?token=url-secret-9a7e")).json()

    tested = await client.post(
        path(tenant, f"/{created['data']['connector']['id']}/test"), headers=tenant.headers
    )
    listed = await client.get(path(tenant), headers=tenant.headers)

    assert tested.status == 502
    for text in (await tested.text(), await listed.text()):
        assert "url-secret" not in text


async def test_a_connector_stored_before_urls_were_sealed_still_works_and_shows_its_host(
    client: Any, tenant_factory: TenantFactory, remote: Remote, db: asyncpg.Pool, settings: Settings
) -> None:
    # Given a row as migration 0006 found it: the whole URL in `url`, nothing sealed
    tenant = await tenant_factory()
    created = await (await register(client, tenant, remote.url, Authorization=SECRET)).json()
    connector_id = created["data"]["connector"]["id"]
    await db.execute(
        "UPDATE mcp_connectors SET url = $1, url_sealed = NULL WHERE id = $2",
        remote.url + "?token=old-secret",
        uuid.UUID(connector_id),
    )

    listed = await client.get(path(tenant), headers=tenant.headers)
    tested = await client.post(path(tenant, f"/{connector_id}/test"), headers=tenant.headers)

    assert (await listed.json())["data"]["connectors"][0]["url"] == remote.url.removesuffix("/mcp")
    assert "old-secret" not in await listed.text()
    assert tested.status == 200 and remote.queries[-1] == b"token=old-secret"


async def test_without_its_header_the_server_refuses_and_the_test_says_so(
    client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    tenant = await tenant_factory()
    created = await (await register(client, tenant, remote.url)).json()

    tested = await client.post(
        path(tenant, f"/{created['data']['connector']['id']}/test"), headers=tenant.headers
    )

    body = await tested.json()
    assert tested.status == 502 and body["error"]["code"] == "upstream_error"
    # the server is named by scheme + host only: the URL's path and query may hold a token
    assert remote.url.removesuffix("/mcp") in body["error"]["message"]
    assert "/mcp" not in body["error"]["message"]


async def test_the_tool_list_is_cached_for_five_minutes(
    client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    tenant = await tenant_factory()
    created = await (await register(client, tenant, remote.url, Authorization=SECRET)).json()
    services = appkeys.services(client.app)

    first = await toolbox.tools_for(services, principal_of(tenant))
    asked = remote.requests
    second = await toolbox.tools_for(services, principal_of(tenant))

    assert first == second and len(first) == 6
    assert remote.requests == asked
    key = f"lookout:mcp-tools:{created['data']['connector']['id']}"
    assert 290 < await services.redis.ttl(key) <= tool_cache.TTL_S


async def test_calls_are_bounded_in_output_and_time_and_tool_errors_are_results(
    settings: Settings, aiohttp_client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    # fetch_timeout_s bounds the whole exchange (the tool list, each call), not the slow tool
    # alone: room for a loaded machine, and the slow tool sleeps well past it
    client = await aiohttp_client(
        app.create_app(settings.replace(mcp_text_limit=1000, fetch_timeout_s=3.0))
    )
    tenant = await tenant_factory()
    await register(client, tenant, remote.url, Authorization=SECRET)
    services = appkeys.services(client.app)
    offered = {tool.name: tool for tool in await toolbox.tools_for(services, principal_of(tenant))}

    big = await toolbox.call(services, principal_of(tenant), offered["big"], {})
    broken = await toolbox.call(services, principal_of(tenant), offered["broken"], {})
    with pytest.raises(errors.UpstreamError) as slow:
        await toolbox.call(services, principal_of(tenant), offered["slow"], {"seconds": 8})

    assert len(big.text) <= 1000 and "Cut at 1,000" in big.text
    assert broken.is_error is True and "the remote tool broke" in broken.text
    assert "did not answer within 3 s" in slow.value.message


async def test_a_connector_on_a_private_address_is_refused(
    settings: Settings, aiohttp_client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    client = await aiohttp_client(app.create_app(settings.replace(allow_private_networks=False)))
    tenant = await tenant_factory()
    by_name = remote.url.replace("127.0.0.1", "localhost")

    literal = await register(client, tenant, remote.url, Authorization=SECRET)
    named = await register(client, tenant, by_name, Authorization=SECRET)
    listed = await (await client.get(path(tenant), headers=tenant.headers)).json()

    for refused in (literal, named):
        body = await refused.json()
        assert refused.status == 422 and body["error"]["code"] == "blocked_destination"
    assert "loopback" in (await named.json())["error"]["message"]
    assert listed["data"]["connectors"] == []


async def test_a_stored_connector_is_refused_once_private_networks_are_off(
    settings: Settings, tenant_factory: TenantFactory, remote: Remote, db: asyncpg.Pool, client: Any
) -> None:
    # Given a connector stored while private networks were allowed
    tenant = await tenant_factory()
    await register(client, tenant, remote.url, Authorization=SECRET)
    strict = dataclasses.replace(
        appkeys.services(client.app), settings=settings.replace(allow_private_networks=False)
    )
    [stored] = await connectors.list_all(strict, principal_of(tenant))

    # When it is tested under the strict rules, Then no request reaches it
    asked = remote.requests
    with pytest.raises(errors.BlockedDestination):
        await connectors.test(strict, principal_of(tenant), stored.id)
    assert remote.requests == asked


async def test_viewers_list_but_cannot_change_and_other_workspaces_see_nothing(
    client: Any, tenant_factory: TenantFactory, remote: Remote, db: asyncpg.Pool, settings: Settings
) -> None:
    owner, stranger = await tenant_factory(), await tenant_factory()
    created = await (await register(client, owner, remote.url, Authorization=SECRET)).json()
    connector_id = created["data"]["connector"]["id"]
    client.session.cookie_jar.update_cookies(
        await member_cookie(db, settings, owner, role="viewer")
    )
    origin = {"Origin": factories.page_origin(client)}

    listed = await client.get(path(owner))
    made = await client.post(path(owner), json={"name": "x", "url": remote.url}, headers=origin)
    removed = await client.delete(path(owner, f"/{connector_id}"), headers=origin)
    foreign = await client.delete(path(stranger, f"/{connector_id}"), headers=stranger.headers)
    wrong_ws = await client.get(path(owner), headers=stranger.headers)

    assert listed.status == 200 and len((await listed.json())["data"]["connectors"]) == 1
    assert (made.status, removed.status) == (403, 403)
    assert (foreign.status, wrong_ws.status) == (404, 404)


async def test_deleting_a_connector_removes_it_and_its_cached_tools(
    client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    tenant = await tenant_factory()
    created = await (await register(client, tenant, remote.url, Authorization=SECRET)).json()
    connector_id = created["data"]["connector"]["id"]
    services = appkeys.services(client.app)
    await toolbox.tools_for(services, principal_of(tenant))

    deleted = await client.delete(path(tenant, f"/{connector_id}"), headers=tenant.headers)
    again = await client.delete(path(tenant, f"/{connector_id}"), headers=tenant.headers)

    assert (deleted.status, again.status) == (200, 404)
    assert await toolbox.tools_for(services, principal_of(tenant)) == []
    assert await services.redis.exists(f"lookout:mcp-tools:{connector_id}") == 0


async def test_bad_input_names_the_fields(client: Any, tenant_factory: TenantFactory) -> None:
    tenant = await tenant_factory()
    body = {"name": "", "url": "ftp://x/mcp", "headers": {"Host": "evil"}, "command": "sh"}

    response = await client.post(path(tenant), json=body, headers=tenant.headers)

    fields = (await response.json())["error"]["details"]["fields"]
    assert response.status == 400
    assert {"name", "url", "headers", "command"} <= set(fields)


async def test_after_a_secret_key_change_the_connector_is_listed_as_unreadable(
    settings: Settings, aiohttp_client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    # Given a connector sealed under one secret key
    first = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory()
    await register(first, tenant, remote.url, Authorization=SECRET)

    # When the app runs under another key
    rotated = await aiohttp_client(app.create_app(settings.replace(secret_key="r" * 40)))
    listed = await rotated.get(path(tenant), headers=tenant.headers)
    offered = await toolbox.tools_for(appkeys.services(rotated.app), principal_of(tenant))

    # Then it is still listed, says its headers cannot be read, and offers no tools
    [connector] = (await listed.json())["data"]["connectors"]
    assert listed.status == 200
    assert connector["headers_readable"] is False and connector["headers"] == {}
    assert offered == []


async def test_only_connectors_marked_for_chat_use_reach_the_agent_and_scheduled_turns_read_only(
    client: Any,
    tenant_factory: TenantFactory,
    remote: Remote,
    db: asyncpg.Pool,
    settings: Settings,
) -> None:
    # Given a connector registered without saying (new connectors start unmarked)
    tenant = await tenant_factory()
    body = {"name": "remote", "url": remote.url, "headers": {"Authorization": SECRET}}
    created = await (await client.post(path(tenant), json=body, headers=tenant.headers)).json()
    connector = created["data"]["connector"]
    services = appkeys.services(client.app)
    before = await toolbox.tools_for(services, principal_of(tenant))

    # When the workspace marks it for chat use over the API (a viewer may not)
    client.session.cookie_jar.update_cookies(
        await member_cookie(db, settings, tenant, role="viewer")
    )
    origin = {"Origin": f"http://{client.server.host}:{client.server.port}"}
    by_viewer = await client.patch(path(tenant, f"/{connector['id']}"), json={"chat_use": True},
                                   headers=origin)  # fmt: skip
    client.session.cookie_jar.clear()
    marked = await client.patch(path(tenant, f"/{connector['id']}"), json={"chat_use": True},
                                headers=tenant.headers)  # fmt: skip
    listed = await client.get(path(tenant), headers=tenant.headers)
    interactive = await toolbox.tools_for(services, principal_of(tenant))
    scheduled = await toolbox.tools_for(services, principal_of(tenant), read_only=True)
    unmarked = await client.patch(path(tenant, f"/{connector['id']}"), json={"chat_use": False},
                                  headers=tenant.headers)  # fmt: skip
    after = await toolbox.tools_for(services, principal_of(tenant))
    with pytest.raises(errors.Forbidden):  # a tool offered before it was unmarked
        await toolbox.call(services, principal_of(tenant), interactive[0], {"text": "x"})

    # Then it offered nothing until marked, every tool once marked, and only the tools marked
    # readOnlyHint in a scheduled turn; the list shows the flag; unmarked, nothing again
    assert connector["chat_use"] is False and before == []
    assert by_viewer.status == 403 and marked.status == 200, await marked.text()
    assert (await marked.json())["data"]["connector"]["chat_use"] is True
    assert (await listed.json())["data"]["connectors"][0]["chat_use"] is True
    assert {tool.name for tool in interactive} == {"shout", "big", "slow", "lookup", "erase",
                                                   "broken"}  # fmt: skip
    assert [tool.name for tool in scheduled] == ["lookup"]
    assert unmarked.status == 200 and after == []


async def test_marking_a_connector_checks_the_body_and_the_workspace(
    client: Any, tenant_factory: TenantFactory, remote: Remote
) -> None:
    tenant, stranger = await tenant_factory(), await tenant_factory()
    created = await (await register(client, tenant, remote.url, Authorization=SECRET)).json()
    where = path(tenant, f"/{created['data']['connector']['id']}")

    foreign = await client.patch(where, json={"chat_use": True}, headers=stranger.headers)
    unknown = await client.patch(where, json={"chat_use": True, "url": "x"},
                                 headers=tenant.headers)  # fmt: skip
    not_bool = await client.patch(where, json={"chat_use": "yes please"}, headers=tenant.headers)
    missing = await client.patch(path(tenant, f"/{uuid.uuid4()}"), json={"chat_use": True},
                                 headers=tenant.headers)  # fmt: skip

    assert foreign.status == 404
    assert (unknown.status, not_bool.status, missing.status) == (400, 400, 404)
