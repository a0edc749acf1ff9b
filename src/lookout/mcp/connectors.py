"""A workspace's own MCP servers ("connectors"): stored with their URL and headers sealed (a
`?token=` in a URL is as secret as an Authorization header), listed with the URL as scheme + host
and the header values masked, deleted, and tested by listing the server's tools."""

from __future__ import annotations

import json
import uuid
from typing import Any

from lookout import errors
from lookout.access import secrets
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.db import repo
from lookout.mcp import remote, tool_cache

MAX_CONNECTORS = 20
_PURPOSE = "mcp-connector-headers"
_URL_PURPOSE = "mcp-connector-url"
_MASK = "***"


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
    existing = await repo.list_mcp_connectors(services.db, workspace_id=principal.workspace_id)
    if len(existing) >= MAX_CONNECTORS:
        raise errors.Conflict(
            f"This workspace already has {MAX_CONNECTORS} MCP connectors, the most it may have; "
            "delete one first."
        )
    await remote.check_destination(url, services.settings)
    connector_id = uuid.uuid4()
    try:
        async with repo.transaction(services.db) as conn:
            created = await repo.insert_mcp_connector(
                conn,
                connector_id=connector_id,
                workspace_id=principal.workspace_id,
                name=name,
                url=remote.shown_url(url),
                url_sealed=secrets.seal(
                    services.settings.secret_key,
                    _URL_PURPOSE,
                    url.encode("utf-8"),
                    context=connector_id.bytes,
                ),
                headers_encrypted=_seal(services.settings.secret_key, connector_id, headers),
            )
            if chat_use:
                await repo.set_mcp_connector_chat_use(
                    conn, connector_id=connector_id, workspace_id=principal.workspace_id,
                    chat_use=True,
                )  # fmt: skip
            return created
    except errors.Conflict:
        raise errors.Conflict(f"This workspace already has a connector named {name!r}.") from None


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
        raise errors.NotFound("No such MCP connector in this workspace.")


async def chat_use_ids(services: Services, workspace_id: uuid.UUID) -> set[uuid.UUID]:
    """The workspace's connectors marked for chat use."""
    return await repo.list_chat_connector_ids(services.db, workspace_id=workspace_id)


async def list_all(services: Services, principal: Principal) -> list[repo.McpConnector]:
    return await repo.list_mcp_connectors(services.db, workspace_id=principal.workspace_id)


async def get(
    services: Services, principal: Principal, connector_id: uuid.UUID
) -> repo.McpConnector:
    found = await repo.get_mcp_connector(
        services.db, connector_id=connector_id, workspace_id=principal.workspace_id
    )
    if found is None:
        raise errors.NotFound("No such MCP connector in this workspace.")
    return found


async def delete(services: Services, principal: Principal, connector_id: uuid.UUID) -> None:
    principal.require("editor")
    deleted = await repo.delete_mcp_connector(
        services.db, connector_id=connector_id, workspace_id=principal.workspace_id
    )
    if not deleted:
        raise errors.NotFound("No such MCP connector in this workspace.")
    await tool_cache.forget(services.redis, connector_id)


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
    plain = secrets.unseal(
        services.settings.secret_key,
        _URL_PURPOSE,
        connector.url_sealed,
        context=connector.id.bytes,
    )
    return plain.decode("utf-8")


def headers_of(services: Services, connector: repo.McpConnector) -> dict[str, str]:
    """The connector's headers, unsealed (for the outbound request only)."""
    if connector.headers_encrypted is None:
        return {}
    plain = secrets.unseal(
        services.settings.secret_key,
        _PURPOSE,
        connector.headers_encrypted,
        context=connector.id.bytes,
    )
    headers: dict[str, str] = json.loads(plain)
    return headers


def _seal(secret_key: str, connector_id: uuid.UUID, headers: dict[str, str]) -> bytes | None:
    if not headers:
        return None
    plain = json.dumps(headers, separators=(",", ":")).encode("utf-8")
    return secrets.seal(secret_key, _PURPOSE, plain, context=connector_id.bytes)
