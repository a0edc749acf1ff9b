"""Talking to a workspace's MCP server with the official client: list its tools, call one.

Only remote Streamable HTTP servers: a connector never starts a local process. Every call is
bounded in time (fetch_timeout_s for the whole exchange), in bytes (fetch_max_bytes per answer)
and in what it hands back (mcp_text_limit characters).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import socket
import urllib.parse
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from yarl import URL

import lookout
from lookout import errors
from lookout.capabilities import addresses, guard
from lookout.mcp import calls, pinned
from lookout.settings import Settings

# The MCP client library (and the httpx2 client it speaks through: lookout.mcp.pinned) loads only
# when a connector is used (bench/footprint.py: ~1.9 s and ~580 modules at import, in every
# worker, for nobody with no connector).
if TYPE_CHECKING:
    import mcp.types as mcp_types
    from mcp.client import Client

logger = logging.getLogger(__name__)

MAX_TOOLS = 100
MAX_PAGES = 10


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """What a connector's tool answered, bounded for a model to read."""

    text: str
    structured: dict[str, Any] | None
    is_error: bool


def shown_url(url: str) -> str:
    """What may be said of a connector's URL: scheme + host (and port), never the path or
    query, which may hold a token."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}"


def _redact(text: str, url: str) -> str:
    """`text` (an error of the HTTP client, say) without the secret parts of `url`."""
    text = text.replace(url, shown_url(url))
    tail = url[len(shown_url(url)) :]
    return text.replace(tail, "/…") if len(tail) > 1 else text


async def check_destination(url: str, settings: Settings) -> None:
    """BlockedDestination unless `url` is http(s) and every address of its host is allowed.
    The refusal names the URL as scheme + host only."""
    policy = guard.Policy.from_settings(settings)
    try:
        target = policy.check_url(URL(url))
        host = target.raw_host or ""
        if addresses.parse_ip(host) is not None:
            return
        await guard.GuardedResolver(policy).resolve(host, target.port or 0, socket.AF_UNSPEC)
    except errors.BlockedDestination as exc:
        raise guard.blocked(
            shown_url(url), exc.details["reason"], rule=exc.details["rule"]
        ) from None
    except OSError as exc:
        raise errors.FetchFailed(
            f"Could not resolve {host}: {exc}", url=shown_url(url), reason="dns"
        ) from None


async def list_tools(url: str, headers: Mapping[str, str], settings: Settings) -> list[Any]:
    """The server's tools (at most MAX_TOOLS), as wire dicts."""
    async with _session(url, headers, settings) as client:
        found: list[mcp_types.Tool] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            found, cursor = found + page.tools, page.next_cursor
            if not cursor or len(found) >= MAX_TOOLS:
                break
    return [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in found][
        :MAX_TOOLS
    ]


async def call_tool(
    url: str, headers: Mapping[str, str], settings: Settings, name: str, arguments: dict[str, Any]
) -> ToolResult:
    """Call tool `name`; the server's own tool failures come back as is_error results."""
    async with _session(url, headers, settings) as client:
        result = await client.call_tool(name, arguments)
    return bounded_result(result, settings.mcp_text_limit)


@contextlib.asynccontextmanager
async def _session(
    url: str, headers: Mapping[str, str], settings: Settings
) -> AsyncIterator[Client]:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation

    await check_destination(url, settings)
    try:
        async with (
            asyncio.timeout(settings.fetch_timeout_s),
            pinned.client(settings, headers) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode="auto",
                cache=None,
                client_info=Implementation(name="lookout", version=lookout.__version__),
                read_timeout_seconds=settings.fetch_timeout_s,
            ) as client,
        ):
            yield client
    except Exception as exc:  # ExceptionGroups from the client's task groups included
        raise _translate(exc, url, settings) from None


def _translate(exc: BaseException, url: str, settings: Settings) -> errors.LookoutError:
    """The one error a caller sees for whatever stopped the exchange with `url`."""
    from mcp.shared.exceptions import MCPError  # loaded: the exchange began

    found = _leaves(exc)
    shown = shown_url(url)
    for leaf in found:
        if isinstance(leaf, errors.LookoutError):
            return leaf
    for leaf in found:
        if isinstance(leaf, TimeoutError):
            return errors.UpstreamError(
                f"The MCP server at {shown} did not answer within {settings.fetch_timeout_s:g} s."
            )
        if isinstance(leaf, MCPError):
            said = _redact(leaf.message, url)
            return errors.UpstreamError(
                f"The MCP server at {shown} answered an error: {said}", code=leaf.code
            )
    logger.info("MCP connector %s failed: %s", shown, _redact(repr(exc), url))
    why = _redact(str(found[0]), url) if found else type(exc).__name__
    return errors.UpstreamError(f"Could not talk to the MCP server at {shown}: {why}")


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def bounded_result(result: mcp_types.CallToolResult, limit: int) -> ToolResult:
    """Text within `limit` characters; structured content only when it fits too."""
    text = "\n".join(_block_text(block) for block in result.content)
    structured = result.structured_content
    if not isinstance(structured, dict) or len(json.dumps(structured, default=str)) > limit:
        if structured is not None:
            text += "\n[The structured result was too large to keep.]"
        structured = None
    hint = "Ask the tool for less (a narrower query or a smaller page)."
    return ToolResult(
        text=calls.bounded(text, limit, hint), structured=structured, is_error=result.is_error
    )


def _block_text(block: mcp_types.ContentBlock) -> str:
    import mcp.types as mcp_types  # loaded: a tool answered

    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.EmbeddedResource) and isinstance(
        block.resource, mcp_types.TextResourceContents
    ):
        return block.resource.text
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource: {block.uri}]"
    return f"[{block.type} content left out]"
