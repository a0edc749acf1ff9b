"""Helpers every handler shares: read a JSON body, answer the envelope."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from lookout import errors, middleware, textsafe
from lookout.access import envelope


async def json_body(request: web.Request) -> Any:
    """The parsed JSON body (size already bounded by the app); invalid_input when it is not JSON."""
    if not request.body_exists:
        return {}
    raw = await request.read()
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # or nested too deep
        raise errors.InvalidInput("The request body must be JSON.") from None
    if (where := textsafe.unstorable(body)) is not None:
        raise errors.InvalidInput(textsafe.MESSAGE, fields={where: [textsafe.MESSAGE]})
    return body


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
