"""Helpers every handler shares: read a JSON body, answer the envelope."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from lookout import jsonin, middleware
from lookout.access import envelope


async def json_body(request: web.Request) -> Any:
    """The parsed JSON body (size already bounded by the app); invalid_input when it is not JSON."""
    if not request.body_exists:
        return {}
    return jsonin.decode(await request.read())


def ok(request: web.Request, data: Any, *, status: int = 200, **meta: Any) -> web.Response:
    body = envelope.success(
        data,
        envelope.meta(
            request_id=middleware.request_id(request),
            duration_ms=middleware.elapsed_ms(request),
            **meta,
        ),
    )
    return web.json_response(body, status=status)
