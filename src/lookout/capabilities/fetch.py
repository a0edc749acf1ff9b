"""The one way Lookout makes an outbound HTTP request: SSRF-guarded, bounded, with typed errors."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Collection, Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import abc
from yarl import URL

from lookout import errors, mediatypes
from lookout.capabilities import guard, inflate
from lookout.settings import Settings

HTML_TYPES = ("text/html", "application/xhtml+xml")
PAGE_TYPES = (*HTML_TYPES, "text/plain")
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


@dataclasses.dataclass(frozen=True)
class FetchResult:
    url: str
    final_url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    content_type: str
    charset: str | None
    elapsed_ms: int

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("Last-Modified")


@dataclasses.dataclass(frozen=True)
class _Limits:
    max_bytes: int
    accept: Collection[str]
    headers: Mapping[str, str]
    method: str = "GET"
    body: bytes | None = None
    # Provider APIs explain a failure in their error body, so `call_provider` returns it.
    raise_for_status: bool = True


def open_session(
    settings: Settings,
    *,
    resolver: abc.AbstractResolver | None = None,
    policy: guard.Policy | None = None,
    trusted: bool = False,
    origins: Collection[str] = (),
) -> aiohttp.ClientSession:
    """A session whose every connection is guarded; share it, close it when done.

    `resolver` replaces DNS (tests); `trusted` lifts the address rules for operator-configured
    provider URLs; `origins` allows only those "host:port"s; `policy` overrides the settings' rules
    (tests only).
    """
    rules = policy or guard.Policy.from_settings(settings, trusted=trusted, origins=origins)
    connector = guard.GuardedConnector(
        rules, resolver=resolver, limit=max(10, settings.fetch_concurrency * 4), ttl_dns_cache=10
    )
    timeout = aiohttp.ClientTimeout(
        total=None,
        sock_connect=settings.fetch_connect_timeout_s,
        sock_read=settings.fetch_timeout_s,
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        headers={"User-Agent": settings.user_agent},
        # Cookies set for one caller must never be sent on behalf of another.
        cookie_jar=aiohttp.DummyCookieJar(),
        # We decompress ourselves so the decompressed size is bounded as it streams.
        auto_decompress=False,
        trust_env=False,
    )


def _usable(
    session: aiohttp.ClientSession | None,
    settings: Settings,
    trusted: bool,
    origins: Collection[str] = (),
) -> bool:
    connector = None if session is None or session.closed else session.connector
    return isinstance(connector, guard.GuardedConnector) and connector.policy.same_rules(
        guard.Policy.from_settings(settings, trusted=trusted, origins=origins)
    )


@contextlib.asynccontextmanager
async def borrow(
    session: aiohttp.ClientSession | None,
    settings: Settings,
    *,
    trusted: bool = False,
    origins: Collection[str] = (),
) -> AsyncIterator[aiohttp.ClientSession]:
    """`session` if it is guarded by the settings' rules, else a guarded one for this block."""
    if session is not None and _usable(session, settings, trusted, origins):
        yield session
        return
    async with open_session(settings, trusted=trusted, origins=origins) as own:
        yield own


async def fetch(
    url: str,
    *,
    settings: Settings,
    session: aiohttp.ClientSession | None = None,
    max_bytes: int | None = None,
    accept: Collection[str] = PAGE_TYPES,
    etag: str | None = None,
    last_modified: str | None = None,
    resolver: abc.AbstractResolver | None = None,
    trusted: bool = False,
) -> FetchResult:
    """GET `url`, following at most 5 redirects, each re-checked against the address rules.

    `accept` lists the content types wanted (empty = any). `etag` / `last_modified` make the
    request conditional: an unchanged page answers status 304 with an empty body.
    Raises BlockedDestination or FetchFailed (details: url, reason, status).
    """
    headers = {"Accept": _accept_header(accept), "Accept-Encoding": inflate.ACCEPT_ENCODING}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    limits = _Limits(max_bytes or settings.fetch_max_bytes, tuple(accept), headers)
    if resolver is None and _usable(session, settings, trusted):
        assert session is not None
        return await _fetch(session, url, settings, limits)
    async with open_session(settings, resolver=resolver, trusted=trusted) as own:
        return await _fetch(own, url, settings, limits)


async def call_provider(
    url: str,
    *,
    settings: Settings,
    origins: Collection[str],
    session: aiohttp.ClientSession | None = None,
    method: str = "GET",
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    accept: Collection[str] = ("application/json",),
) -> FetchResult:
    """A request to an operator-configured provider API (trusted: address rules lifted, but only
    `origins` reachable, redirects included). An HTTP error status is returned with its body, not
    raised, so the caller can read the provider's own error. Raises BlockedDestination or
    FetchFailed (timeouts, connection failures, size)."""
    sent = {
        "Accept": _accept_header(accept),
        "Accept-Encoding": inflate.ACCEPT_ENCODING,
        **(headers or {}),
    }
    limits = _Limits(
        settings.fetch_max_bytes, tuple(accept), sent, method, body, raise_for_status=False
    )
    async with borrow(session, settings, trusted=True, origins=origins) as guarded:
        return await _fetch(guarded, url, settings, limits)


def _accept_header(accept: Collection[str]) -> str:
    return ", ".join([*accept, "*/*;q=0.1"]) if accept else "*/*"


async def _fetch(
    session: aiohttp.ClientSession, url: str, settings: Settings, limits: _Limits
) -> FetchResult:
    assert isinstance(session.connector, guard.GuardedConnector)
    started = time.monotonic()
    try:
        target = session.connector.policy.check_url(URL(url))
        async with asyncio.timeout(settings.fetch_timeout_s):
            result = await _follow(session, target, url, limits)
    except errors.BlockedDestination as exc:
        exc.details["url"] = url
        raise
    except errors.FetchFailed:
        raise
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        raise _translate(exc, url, settings) from None
    return dataclasses.replace(result, elapsed_ms=round((time.monotonic() - started) * 1000))


async def _follow(
    session: aiohttp.ClientSession, target: URL, url: str, limits: _Limits
) -> FetchResult:
    assert isinstance(session.connector, guard.GuardedConnector)
    policy = session.connector.policy
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with session.request(
                limits.method,
                target,
                headers=limits.headers,
                data=limits.body,
                allow_redirects=False,
            ) as response:
                location = response.headers.get("Location")
                if response.status not in _REDIRECT_STATUSES or not location:
                    return await _read(response, url, limits)
        except errors.BlockedDestination as exc:
            # Raised by the resolver, which knows the host but not the URL.
            raise guard.blocked(target, exc.details["reason"], rule=exc.details["rule"]) from None
        target = policy.check_url(target.join(URL(location)))
        if response.status not in (307, 308):  # only these two keep the method and body
            limits = dataclasses.replace(limits, method="GET", body=None)
    raise _failed(url, "redirects", f"{url} redirected more than {MAX_REDIRECTS} times")


async def _read(response: aiohttp.ClientResponse, url: str, limits: _Limits) -> FetchResult:
    final = str(response.url)
    if response.status >= 400 and limits.raise_for_status:
        message = f"{final} answered HTTP {response.status} {response.reason or ''}".rstrip()
        raise _failed(url, "http_status", message, status=response.status)
    declared = response.headers.get("Content-Type")  # a page's own: read without trusting it
    content_type = mediatypes.media_type(declared)
    wanted_type = response.status < 400 and response.status != 304 and bool(limits.accept)
    if wanted_type and content_type not in limits.accept:
        shown = content_type or "of no declared type"
        wanted = ", ".join(limits.accept)
        message = f"{final} is {shown}, not {wanted}"
        raise _failed(url, "content_type", message, status=response.status)
    body = await _read_body(response, url, limits.max_bytes)
    return FetchResult(
        url=url,
        final_url=final,
        status=response.status,
        headers=response.headers,
        body=body,
        content_type=content_type,
        charset=mediatypes.charset(declared),
        elapsed_ms=0,
    )


async def _read_body(response: aiohttp.ClientResponse, url: str, max_bytes: int) -> bytes:
    declared = response.content_length
    if declared is not None and declared > max_bytes:
        raise _too_large(url, max_bytes, response.status)
    try:
        inflater = inflate.Inflater(response.headers.get("Content-Encoding", ""), max_bytes)
        received = 0
        async for chunk in response.content.iter_chunked(_CHUNK):
            received += len(chunk)
            if received > max_bytes:
                raise inflate.TooLarge
            inflater.feed(chunk)
        return inflater.finish()
    except inflate.TooLarge:
        raise _too_large(url, max_bytes, response.status) from None
    except inflate.BadEncoding as exc:
        raise _failed(url, "encoding", f"{url}: {exc}", status=response.status) from None


def _too_large(url: str, max_bytes: int, status: int) -> errors.FetchFailed:
    limit = f"{max_bytes / 1_000_000:g} MB" if max_bytes >= 100_000 else f"{max_bytes} bytes"
    return _failed(url, "too_large", f"{url} is larger than {limit}, the limit", status=status)


def _failed(url: str, reason: str, message: str, **details: Any) -> errors.FetchFailed:
    return errors.FetchFailed(message, url=url, reason=reason, **details)


def _translate(exc: BaseException, url: str, settings: Settings) -> errors.FetchFailed:
    """One place that turns aiohttp's failures into messages saying what happened."""
    # urlsplit, not URL: the URL may be the very thing that failed to parse.
    host = urlsplit(url).hostname or url
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return _failed(url, "dns", f"Could not resolve {host}: {exc.os_error.strerror or exc}")
    if isinstance(exc, aiohttp.ClientSSLError):
        return _failed(url, "tls", f"The TLS handshake with {host} failed: {exc}")
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        limit = settings.fetch_connect_timeout_s
        return _failed(url, "connect_timeout", f"Could not connect to {host} within {limit:g} s")
    if isinstance(exc, aiohttp.ClientConnectorError):
        why = exc.os_error.strerror or str(exc)
        return _failed(url, "connect", f"Could not connect to {host}:{exc.port}: {why}")
    if isinstance(exc, TimeoutError):
        limit = settings.fetch_timeout_s
        return _failed(url, "timeout", f"Timed out after {limit:g} s fetching {url}")
    if isinstance(exc, ValueError):
        return _failed(url, "invalid_url", f"{url} (or a redirect from it) is not a valid URL")
    return _failed(url, "connection", f"The connection to {host} failed: {exc}")
