"""Web middlewares: request metrics by route template, and the request id on every log line."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from lookout import appkeys, logs
from lookout.ops import metrics

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
CLIENT_GONE = 499  # nginx's code for "the client closed the connection first"


def route_label(request: web.Request) -> str:
    """The matched route's template (`/api/chats/{chat_id}`), never the raw path: bounded labels."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "unmatched"


@web.middleware
async def observe(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Count and time every request (outermost: sees the status the error middleware chose)."""
    started = time.monotonic()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = CLIENT_GONE
        raise
    finally:
        route = route_label(request)
        method = request.method if request.method in _METHODS else "other"
        metrics.HTTP_REQUESTS.labels(route, method, str(status)).inc()
        metrics.HTTP_DURATION.labels(route, method).observe(time.monotonic() - started)


@web.middleware
async def bind_ids(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Bind the request id the error middleware assigned; turns and jobs started here inherit it."""
    with logs.bound(request_id=request[appkeys.REQUEST_ID]):
        return await handler(request)
