"""The MCP door: POST /mcp (Streamable HTTP, stateless) and its protected resource metadata."""

from __future__ import annotations

from aiohttp import web

from lookout.routes import mcp_transport as transport


async def endpoint(request: web.Request) -> web.StreamResponse:
    return await transport.handle(request)


async def resource_metadata(request: web.Request) -> web.Response:
    return web.json_response(transport.resource_metadata(request))
