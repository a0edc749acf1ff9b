"""One call to a provider's JSON API, and its failures turned into errors a client can act on.

A provider's 429 becomes `rate_limited` with its Retry-After; 5xx, timeouts, refusals and bodies
that are not the JSON promised become `upstream_error`; nothing a provider does becomes a 500.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

from lookout import errors
from lookout.capabilities import fetch, guard
from lookout.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_RETRY_AFTER_S = 30  # when a provider says 429 without saying how long to wait
MAX_RETRY_AFTER_S = 3600


def host(base_url: str) -> str:
    """The host name of a provider's configured URL."""
    return urlsplit(base_url).hostname or ""


def origin(base_url: str) -> str:
    """The one host and port a provider's calls may reach: its configured URL's."""
    return guard.origin(URL(base_url))


@contextlib.asynccontextmanager
async def session(
    http: aiohttp.ClientSession, settings: Settings, base_url: str
) -> AsyncIterator[aiohttp.ClientSession]:
    """A session for one verb call's requests to the provider at `base_url`."""
    async with fetch.borrow(http, settings, trusted=True, origins=(origin(base_url),)) as own:
        yield own


async def call(
    name: str,
    url: str,
    *,
    base_url: str,
    settings: Settings,
    http: aiohttp.ClientSession,
    method: str = "GET",
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    not_found: str | None = None,
    hints: Mapping[int, str] | None = None,
) -> Any:
    """The JSON a provider answered to `url`. `body` is sent as JSON; `not_found` is the message
    for a 404 that means "no such thing"; `hints` add advice to the message for some statuses."""
    sent = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    try:
        result = await fetch.call_provider(
            url,
            settings=settings,
            origins=(origin(base_url),),
            session=http,
            method=method,
            body=data,
            headers=sent,
        )
    except (errors.FetchFailed, errors.BlockedDestination) as exc:
        raise errors.UpstreamError(f"{name} failed: {exc.message}", provider=name) from None
    if result.status >= 400:
        raise _refusal(name, result, not_found, hints or {})
    try:
        return json.loads(result.body)
    except (ValueError, RecursionError):
        raise errors.UpstreamError(
            f"{name} answered something that is not JSON.", provider=name
        ) from None


def _refusal(
    name: str, result: fetch.FetchResult, not_found: str | None, hints: Mapping[int, str]
) -> errors.LookoutError:
    status = result.status
    if status == 429:
        wait = retry_after(result.headers.get("Retry-After"))
        return errors.RateLimited(
            f"{name} is limiting our requests; retry in {wait} s.",
            retry_after=wait,
            provider=name,
        )
    if status == 404 and not_found:
        return errors.NotFound(not_found, provider=name)
    said = _their_message(result)
    logger.info("provider %s answered HTTP %s: %s", name, status, said)
    message = f"{name} answered HTTP {status}" + (f": {said}" if said else "")
    return errors.UpstreamError(
        message.rstrip(".") + "." + hints.get(status, ""), provider=name, status=status
    )


def retry_after(raw: str | None, *, now: datetime.datetime | None = None) -> int:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), within bounds."""
    seconds: float = DEFAULT_RETRY_AFTER_S
    if raw and raw.strip().isdigit():
        seconds = int(raw.strip())
    elif raw:
        with contextlib.suppress(TypeError, ValueError):
            when = email.utils.parsedate_to_datetime(raw)
            current = now or datetime.datetime.now(datetime.UTC)
            seconds = (when - current).total_seconds()
    return int(min(MAX_RETRY_AFTER_S, max(1, round(seconds))))


def _their_message(result: fetch.FetchResult) -> str:
    """The provider's own explanation: Google's and Nominatim's {"error": {"message"}}, or a
    plain-text body's start; never an HTML error page."""
    try:
        payload = json.loads(result.body)
    except (ValueError, RecursionError):
        if result.content_type != "text/plain":
            return ""
        return " ".join(result.body[:300].decode("utf-8", errors="replace").split())
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return " ".join(str(error).split())[:300] if error else ""
