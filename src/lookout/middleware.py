"""Web middleware: request ids, and the one place errors become the envelope."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable

from aiohttp import web

from lookout import appkeys, errors
from lookout.access import envelope

logger = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def request_id(request: web.Request) -> str:
    return request[appkeys.REQUEST_ID]


def elapsed_ms(request: web.Request) -> int:
    return int((time.monotonic() - request[appkeys.STARTED]) * 1000)


def error_response(request: web.Request, error: errors.LookoutError) -> web.Response:
    meta = envelope.meta(
        request_id=request_id(request),
        verb=request.get(appkeys.VERB),
        duration_ms=elapsed_ms(request),
    )
    body = envelope.failure(error, meta)
    response = web.json_response(body, status=error.status)
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
        if isinstance(error, errors.RateLimited) and "limit" in error.details:
            response.headers["RateLimit-Limit"] = str(error.details["limit"])
            response.headers["RateLimit-Remaining"] = "0"
            response.headers["RateLimit-Reset"] = str(error.retry_after)
    return response


_HTTP_ERRORS: dict[int, type[errors.LookoutError]] = {
    400: errors.InvalidInput,
    401: errors.Unauthenticated,
    403: errors.Forbidden,
    404: errors.NotFound,
    405: errors.InvalidInput,
    413: errors.PayloadTooLarge,
}


def _from_http(exc: web.HTTPException) -> errors.LookoutError:
    kind = _HTTP_ERRORS.get(exc.status, errors.InvalidInput)
    if exc.status == 404:
        return errors.NotFound("There is nothing at this address.")
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = sorted(exc.allowed_methods)
        return errors.InvalidInput(
            f"This address does not accept {exc.method}; use {' or '.join(allowed)}.",
            allowed=allowed,
        )
    if exc.status == 413:
        return errors.PayloadTooLarge("The request body is too large.")
    return kind(exc.reason)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Assign a request id; turn every failure into the envelope (never a trace)."""
    given = request.headers.get("X-Request-Id", "")
    request[appkeys.REQUEST_ID] = given if _CLIENT_REQUEST_ID.match(given) else uuid.uuid4().hex
    request[appkeys.STARTED] = time.monotonic()
    try:
        response = await handler(request)
    except errors.LookoutError as exc:
        response = error_response(request, exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = error_response(request, _from_http(exc))
        if isinstance(exc, web.HTTPMethodNotAllowed):
            response.headers["Allow"] = ", ".join(sorted(exc.allowed_methods))
    except Exception:
        logger.exception("unexpected error", extra={"request_id": request_id(request)})
        response = error_response(request, errors.LookoutError("Something went wrong on our side."))
    if not response.prepared:
        response.headers["X-Request-Id"] = request_id(request)
    return response
