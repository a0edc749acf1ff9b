"""Helpers every handler shares: read a JSON body, answer the envelope."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
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
    return json_response(body, status=status)


def json_response(
    body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    """`body` as JSON, written by orjson: a verb's answer carries whole pages, and the standard
    library's encoder (aiohttp's json_response) took 575 us for an answer with 100 KB of
    markdown, orjson 22 us (7 us and 0.5 us for a one-line page; 2026-12-07). Non-ASCII
    characters are written as UTF-8, not escaped. Anything orjson does not write (an integer
    past 64 bits) is written by the standard library."""
    try:
        text = orjson.dumps(body)
    except TypeError:
        text = json.dumps(body).encode()
    return web.Response(
        body=text, status=status, headers=headers, content_type="application/json", charset="utf-8"
    )
