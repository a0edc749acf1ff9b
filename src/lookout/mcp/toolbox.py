"""The agent's API to a workspace's connectors: their tools under names a model can call, and the
call itself (bounded in time and output). The LLM planner offers these next to the verbs, from
the connectors the workspace marked for chat use only, and in a turn nobody watches (a scheduled
one) only the tools their server marks `readOnlyHint` (a hint a server may get wrong, but the
only word MCP has for it; a tool without it counts as one that writes)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import re
import uuid
from typing import Any

from lookout import errors
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.db import repo
from lookout.mcp import connectors, remote

MAX_NAME = 64  # what OpenAI-compatible APIs accept as a tool name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclasses.dataclass(frozen=True)
class ConnectorTool:
    """One tool of one connector. `qualified_name` is unique in the workspace and safe to hand a
    model as a tool name; `name` is what the connector's server calls it."""

    connector_id: uuid.UUID
    connector_name: str
    name: str
    qualified_name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False  # the server's readOnlyHint annotation


async def tools_for(
    services: Services, principal: Principal, *, read_only: bool = False
) -> list[ConnectorTool]:
    """The tools of every enabled connector marked for chat use (with `read_only`, only those
    marked readOnlyHint); a server that cannot be reached just offers none."""
    found = await repo.list_mcp_connectors(services.db, workspace_id=principal.workspace_id)
    chat_use = await connectors.chat_use_ids(services, principal.workspace_id)
    enabled = [connector for connector in found if connector.enabled and connector.id in chat_use]
    listings = await asyncio.gather(*(connectors.tools_of(services, c) for c in enabled))
    tools = [
        _tool(connector, raw)
        for connector, listing in zip(enabled, listings, strict=True)
        for raw in listing.tools
    ]
    return [tool for tool in tools if tool.read_only or not read_only]


def find(tools: list[ConnectorTool], qualified_name: str) -> ConnectorTool | None:
    return next((tool for tool in tools if tool.qualified_name == qualified_name), None)


async def call(
    services: Services, principal: Principal, tool: ConnectorTool, arguments: dict[str, Any]
) -> remote.ToolResult:
    """Call `tool` as `principal`; UpstreamError / BlockedDestination when the server fails."""
    principal.require("editor")
    connector = await connectors.get(services, principal, tool.connector_id)
    if not connector.enabled:
        raise errors.Conflict(f"The MCP connector {connector.name!r} is disabled.")
    if connector.id not in await connectors.chat_use_ids(services, principal.workspace_id):
        raise errors.Forbidden(f"The MCP connector {connector.name!r} is not marked for chat use.")
    headers = connectors.headers_of(services, connector)
    url = connectors.url_of(services, connector)
    return await remote.call_tool(url, headers, services.settings, tool.name, arguments)


def _tool(connector: repo.McpConnector, raw: dict[str, Any]) -> ConnectorTool:
    name = str(raw.get("name", ""))
    return ConnectorTool(
        connector_id=connector.id,
        connector_name=connector.name,
        name=name,
        qualified_name=qualified_name(connector.name, name),
        description=str(raw.get("description") or raw.get("title") or name),
        input_schema=raw.get("inputSchema") or {"type": "object"},
        read_only=_read_only_hint(raw),
    )


def _read_only_hint(raw: dict[str, Any]) -> bool:
    annotations = raw.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def qualified_name(connector_name: str, tool_name: str) -> str:
    """`<connector>__<tool>` in [A-Za-z0-9_-], at most 64 characters (long ones end in a hash)."""
    full = f"{_slug(connector_name)}__{_slug(tool_name)}"
    if len(full) <= MAX_NAME:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{full[: MAX_NAME - 9]}_{digest}"


def _slug(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "x"
