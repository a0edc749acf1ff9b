"""A workspace's own MCP servers ("connectors"): stored with their URL and headers sealed (a
`?token=` in a URL is as secret as an Authorization header), listed with the URL as scheme + host
and the header values masked, deleted, and tested by listing the server's tools."""

from __future__ import annotations

import json
import uuid
from typing import Any

from lookout import errors
from lookout.access import owned
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.db import repo
from lookout.mcp import remote, tool_cache

MAX_CONNECTORS = 20
_PURPOSE = "mcp-connector-headers"
_URL_PURPOSE = "mcp-connector-url"
_MASK = "***"


async def _forget_tools(services: Services, connector_id: uuid.UUID) -> None:
    await tool_cache.forget(services.redis, connector_id)


KIND: owned.Owned[repo.McpConnector] = owned.Owned(
    missing="No such MCP connector in this workspace.",
    full=f"This workspace already has {MAX_CONNECTORS} MCP connectors, the most it may have; "
    "delete one first.",
    taken="This workspace already has a connector named {name!r}.",
    most=MAX_CONNECTORS,
    list_rows=lambda db, ws: repo.list_mcp_connectors(db, workspace_id=ws),
    get_row=lambda db, ws, id_: repo.get_mcp_connector(db, connector_id=id_, workspace_id=ws),
    delete_row=lambda db, ws, id_: repo.delete_mcp_connector(db, connector_id=id_, workspace_id=ws),
    after_delete=_forget_tools,
)
list_all, get, delete = KIND.list_all, KIND.get, KIND.delete


async def create(
    services: Services,
    principal: Principal,
    *,
    name: str,
    url: str,
    headers: dict[str, str],
    chat_use: bool = False,
) -> repo.McpConnector:
    """Store a connector after its URL passed the SSRF rules; Conflict for a taken name. Its
    tools reach the chat agent only with `chat_use` (or once it is marked so later)."""
    principal.require("editor")
    await KIND.check_room(services, principal)
    await remote.check_destination(url, services.settings)
    connector_id = uuid.uuid4()
    with KIND.named(name):
        async with repo.transaction(services.db) as conn:
            created = await repo.insert_mcp_connector(
                conn,
                connector_id=connector_id,
                workspace_id=principal.workspace_id,
                name=name,
                url=remote.shown_url(url),
                url_sealed=owned.seal(services, _URL_PURPOSE, connector_id, url.encode("utf-8")),
                headers_encrypted=_seal(services, connector_id, headers),
            )
            if chat_use:
                await repo.set_mcp_connector_chat_use(
                    conn, connector_id=connector_id, workspace_id=principal.workspace_id,
                    chat_use=True,
                )  # fmt: skip
            return created


async def set_chat_use(
    services: Services, principal: Principal, connector_id: uuid.UUID, chat_use: bool
) -> None:
    """Mark the connector for chat use (its tools reach the chat agent) or unmark it."""
    principal.require("editor")
    stored = await repo.set_mcp_connector_chat_use(
        services.db, connector_id=connector_id, workspace_id=principal.workspace_id,
        chat_use=chat_use,
    )  # fmt: skip
    if stored is None:
        raise KIND.not_found()


async def chat_use_ids(services: Services, workspace_id: uuid.UUID) -> set[uuid.UUID]:
    """The workspace's connectors marked for chat use."""
    return await repo.list_chat_connector_ids(services.db, workspace_id=workspace_id)


async def test(
    services: Services, principal: Principal, connector_id: uuid.UUID
) -> list[dict[str, Any]]:
    """List the server's tools now (refreshing the cache); UpstreamError saying why not."""
    principal.require("editor")
    listing = await tools_of(services, await get(services, principal, connector_id), fresh=True)
    return listing.tools


async def tools_of(
    services: Services, connector: repo.McpConnector, *, fresh: bool = False
) -> tool_cache.Listing:
    """The connector's tools, from the cache unless `fresh` (which raises what went wrong)."""
    cached = None if fresh else await tool_cache.get(services.redis, connector.id)
    if cached is not None:
        return cached
    try:
        tools = await remote.list_tools(
            url_of(services, connector), headers_of(services, connector), services.settings
        )
    except errors.LookoutError as exc:
        await tool_cache.put(services.redis, connector.id, tool_cache.Listing([], exc.message))
        if fresh:
            raise
        return tool_cache.Listing([], exc.message)
    listing = tool_cache.Listing(tools)
    await tool_cache.put(services.redis, connector.id, listing)
    return listing


def view(services: Services, connector: repo.McpConnector, *, chat_use: bool) -> dict[str, Any]:
    """What a member may see: everything but the header values."""
    try:
        names, readable = sorted(headers_of(services, connector)), True
        url_of(services, connector)
    except errors.Conflict:
        # One unreadable connector (secret key changed) must not hide the others.
        names, readable = [], False
    return {
        "id": connector.id,
        "name": connector.name,
        "url": remote.shown_url(connector.url),
        "enabled": connector.enabled,
        "chat_use": chat_use,
        "created_at": connector.created_at,
        "headers": {name: _MASK for name in names},
        "headers_readable": readable,
    }


def url_of(services: Services, connector: repo.McpConnector) -> str:
    """The connector's whole URL, unsealed (for the outbound request only). A connector made
    before URLs were sealed keeps its URL in the clear until it is re-created."""
    if connector.url_sealed is None:
        return connector.url
    return owned.unseal(services, _URL_PURPOSE, connector.id, connector.url_sealed).decode("utf-8")


def headers_of(services: Services, connector: repo.McpConnector) -> dict[str, str]:
    """The connector's headers, unsealed (for the outbound request only)."""
    if connector.headers_encrypted is None:
        return {}
    plain = owned.unseal(services, _PURPOSE, connector.id, connector.headers_encrypted)
    headers: dict[str, str] = json.loads(plain)
    return headers


def _seal(services: Services, connector_id: uuid.UUID, headers: dict[str, str]) -> bytes | None:
    if not headers:
        return None
    plain = json.dumps(headers, separators=(",", ":")).encode("utf-8")
    return owned.seal(services, _PURPOSE, connector_id, plain)
