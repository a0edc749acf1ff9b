"""The MCP door with the official `mcp` client over a real socket: handshake, tools, calls."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import httpx2
import mcp.types as mcp_types
import pytest
from mcp.client import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from lookout import app
from lookout.capabilities import registry
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import workers
from tests.integration.factories import Site, TenantFactory, site, tenant_factory

__all__ = ["site", "tenant_factory"]

Serve = Callable[..., Awaitable[str]]


@pytest.fixture
def serve(settings: Settings, aiohttp_server: Any) -> Serve:
    """serve(**setting_changes) -> the URL of /mcp on a running app (a real loopback socket)."""

    async def start(**changes: Any) -> str:
        server = await aiohttp_server(app.create_app(settings.replace(**changes)))
        return str(server.make_url("/mcp"))

    return start


@contextlib.asynccontextmanager
async def session_for(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    """An initialized ClientSession (the initialize handshake) sending `key` as a Bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    # jobs_get may wait up to 30 s server-side: the client's read timeout (default 5 s) must too.
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def test_initialize_then_list_every_tool_page_by_page(
    serve: Serve, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()
    url = await serve(mcp_page_size=1)

    async with session_for(url, tenant.key) as session:
        assert session.initialize_result is not None
        assert session.initialize_result.protocol_version == "2025-11-25"
        assert session.initialize_result.server_info.name == "lookout"
        pages, cursor, tools = 0, None, []
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await session.list_tools(params=params)
            pages, tools, cursor = pages + 1, tools + listed.tools, listed.next_cursor
            if cursor is None:
                break

    verbs = registry.all_verbs()
    assert [tool.name for tool in tools] == [v.name.replace(".", "_") for v in verbs] + ["jobs_get"]
    assert pages == len(verbs) + 1
    scrape = next(tool for tool in tools if tool.name == "web_scrape")
    assert scrape.title == "Scrape web pages"
    assert "web_discover" in (scrape.description or "")  # speaks of tools by their MCP names
    assert scrape.input_schema["properties"]["url"]["type"] == "string"
    assert scrape.output_schema is not None and scrape.output_schema["type"] == "object"
    assert scrape.annotations is not None
    assert scrape.annotations.read_only_hint is True
    assert scrape.annotations.open_world_hint is True
    assert scrape.annotations.idempotent_hint is True


async def test_a_newer_client_probing_server_discover_falls_back_to_initialize(
    serve: Serve, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()
    url = await serve()
    headers = {"Authorization": f"Bearer {tenant.key}"}

    # jobs_get may wait up to 30 s server-side: the client's read timeout (default 5 s) must too.
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode="auto", cache=None) as client,
    ):
        listed = await client.list_tools()

    assert "web_scrape" in [tool.name for tool in listed.tools]


async def test_call_web_scrape_answers_structured_content_and_charges_a_credit(
    serve: Serve, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=5)
    url = await serve()

    async with session_for(url, tenant.key) as session:
        result = await session.call_tool("web_scrape", {"url": site.url("/hello")})

    assert result.is_error is False
    assert result.structured_content is not None
    page = result.structured_content["pages"][0]
    assert page["title"] == "hello" and "Some real content" in page["markdown"]
    assert '"title":"hello"' in text_of(result)
    assert result.meta is not None and result.meta["lookout/meta"]["credits_charged"] == 1
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 4


async def test_long_text_is_cut_with_a_note_and_the_rest_stays_in_structured_content(
    serve: Serve, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    url = await serve(mcp_text_limit=300)

    async with session_for(url, tenant.key) as session:
        result = await session.call_tool("web_scrape", {"url": site.url("/long")})

    text = text_of(result)
    assert len(text) <= 300
    assert "structuredContent" in text and "narrow the call" in text
    assert result.structured_content is not None
    assert len(result.structured_content["pages"][0]["markdown"]) > 300


async def test_bad_input_is_an_error_result_naming_the_field_and_costs_nothing(
    serve: Serve, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=5)
    url = await serve()

    async with session_for(url, tenant.key) as session:
        result = await session.call_tool("web_scrape", {"url": "https://example.com", "x": 1})

    assert result.is_error is True
    text = text_of(result)
    assert "invalid_input" in text and '"x"' in text
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 5


async def test_zero_credits_is_an_error_result_that_says_how_to_fix_it(
    serve: Serve, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory(credits=0)
    url = await serve()

    async with session_for(url, tenant.key) as session:
        result = await session.call_tool("web_scrape", {"url": site.url("/hello")})

    assert result.is_error is True
    text = text_of(result)
    assert "insufficient_credits" in text and "add credits" in text
    assert site.hits == {}


async def test_rate_limit_and_blocked_destination_are_error_results(
    serve: Serve, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory(rate_limit=1)
    url = await serve(allow_private_networks=False)

    async with session_for(url, tenant.key) as session:
        blocked = await session.call_tool("web_discover", {"url": "http://127.0.0.1:9/"})
        limited = await session.call_tool("web_discover", {"url": "http://127.0.0.1:9/"})

    assert blocked.is_error is True and "blocked_destination" in text_of(blocked)
    assert "public http(s)" in text_of(blocked)
    assert limited.is_error is True and "rate_limited" in text_of(limited)
    assert "retry in" in text_of(limited)


async def test_an_unknown_tool_is_a_protocol_error(
    serve: Serve, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()
    url = await serve()

    async with session_for(url, tenant.key) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("web_teleport", {})

    assert raised.value.error.code == mcp_types.INVALID_PARAMS


async def test_without_a_key_the_client_is_told_to_send_one(serve: Serve) -> None:
    url = await serve()

    with pytest.raises(BaseExceptionGroup) as raised:
        async with session_for(url, None):
            pass

    errors = [leaf for leaf in leaves(raised.value) if isinstance(leaf, MCPError)]
    assert errors and "Authorization: Bearer lk_" in errors[0].error.message


def leaves(group: BaseException) -> list[BaseException]:
    if not isinstance(group, BaseExceptionGroup):
        return [group]
    return [leaf for inner in group.exceptions for leaf in leaves(inner)]


async def test_a_slow_call_hands_out_a_job_that_jobs_get_finishes(
    serve: Serve, tenant_factory: TenantFactory, site: Site, settings: Settings
) -> None:
    # Given a call above web.scrape's inline budget, and a worker
    tenant = await tenant_factory(credits=10)
    url = await serve(job_wait_s=0.0)
    urls = [site.url(f"/page/{i}") for i in range(6)]

    with workers.running_worker(settings, processes=1, threads=2):
        async with session_for(url, tenant.key) as session:
            # When it is called
            started = await session.call_tool("web_scrape", {"urls": urls})
            assert started.structured_content is not None
            job_id = started.structured_content["id"]
            # Then the answer names the job, and jobs_get waits for its result
            finished = await session.call_tool("jobs_get", {"job_id": job_id, "wait_seconds": 30})

    assert started.is_error is False and job_id in text_of(started)
    assert "jobs_get" in text_of(started)
    assert finished.is_error is False and finished.structured_content is not None
    assert finished.structured_content["status"] == "succeeded"
    pages = finished.structured_content["result"]["data"]["pages"]
    assert [page["title"] for page in pages] == [f"page/{i}" for i in range(6)]


async def test_a_capability_without_a_provider_is_an_error_result_that_says_so(
    serve: Serve, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=5)
    url = await serve(search_url="")

    async with session_for(url, tenant.key) as session:
        result = await session.call_tool("web_discover", {"query": "flood warnings"})

    assert result.is_error is True
    assert "provider_not_configured" in text_of(result)
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 5
