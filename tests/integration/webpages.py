"""Helpers for the fetch and web-verb tests: local sites, a fake DNS, settings, a verb context."""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import aiohttp
import pytest
from aiohttp import abc, web

from lookout.capabilities import readers, registry
from lookout.settings import Settings

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every address a test's client connects to; a non-loopback one fails the test unopened.

    The SSRF tests aim private addresses at the guard: if the guard ever regressed, this keeps
    the suite from sending that traffic anywhere but this machine.
    """
    import aiohttp.connector

    real = aiohttp.connector.aiohappyeyeballs.start_connection
    attempts: list[str] = []

    async def loopback_connection(addr_infos: list[Any], *args: Any, **kwargs: Any) -> Any:
        for info in addr_infos:
            host = str(info[4][0])
            attempts.append(host)
            if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
                raise AssertionError(f"a test tried to connect to {host}")
        return await real(addr_infos, *args, **kwargs)

    monkeypatch.setattr(aiohttp.connector.aiohappyeyeballs, "start_connection", loopback_connection)
    return attempts


@pytest.fixture
def fresh_readers() -> Iterator[None]:
    """No reader process before the test (it sees whether its pages start them), none after."""
    readers.close()
    yield
    readers.close()


def make_settings(*, allow_private: bool = True, **overrides: Any) -> Settings:
    """Settings that need no Postgres or Redis; private networks allowed unless said otherwise."""
    environ = {
        "DATABASE_URL": "postgresql://unused/unused",
        "REDIS_URL": "redis://unused:6379/0",
        "LOOKOUT_SECRET_KEY": "test-secret-key-" + "x" * 16,
        "LOOKOUT_PUBLIC_URL": "http://lookout.test",
    }
    overrides.setdefault("fetch_timeout_s", 5.0)
    return Settings.from_env(environ, allow_private_networks=allow_private, **overrides)


class FakeResolver(abc.AbstractResolver):
    """DNS from a dict: name -> addresses; any other name does not exist."""

    def __init__(self, names: Mapping[str, list[str]]) -> None:
        self.names = dict(names)
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[abc.ResolveResult]:
        self.asked.append(host)
        if host not in self.names:
            raise OSError(socket.EAI_NONAME, "Name or service not known")
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": 0,
            }
            for address in self.names[host]
        ]

    async def close(self) -> None:
        return None


@dataclasses.dataclass
class Site:
    """A local web site: path -> (body, content type, status, headers) or a handler; counts hits."""

    pages: dict[str, Any] = dataclasses.field(default_factory=dict)
    hits: list[str] = dataclasses.field(default_factory=list)
    headers_seen: list[Mapping[str, str]] = dataclasses.field(default_factory=list)

    def add(
        self,
        path: str,
        body: bytes | str = b"",
        *,
        content_type: str = "text/html; charset=utf-8",
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        raw = body.encode() if isinstance(body, str) else body
        all_headers = {"Content-Type": content_type, **(headers or {})}
        self.pages[path] = (raw, status, all_headers)

    def handle(self, path: str, handler: Handler) -> None:
        self.pages[path] = handler

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._serve)
        return app

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.hits.append(request.path_qs)
        self.headers_seen.append(dict(request.headers))
        page = self.pages.get(request.path_qs, self.pages.get(request.path))
        if page is None:
            return web.Response(status=404, text="<h1>Not found</h1>", content_type="text/html")
        if callable(page):
            response: web.StreamResponse = await page(request)
            return response
        body, status, headers = page
        return web.Response(body=body, status=status, headers=headers)


def article(title: str, content: str, *, nav: str = "", head: str = "") -> str:
    """A page with the usual boilerplate around `content`."""
    return (
        f"<!doctype html><html><head>{head}<title>{title}</title></head><body>"
        '<header class="site-header"><a href="/">Home</a>'
        f"<nav>{nav or '<a href=/about>About us</a>'}</nav></header>"
        '<div class="cookie-banner">We use cookies to improve your experience.</div>'
        f"<main><article>{content}</article></main>"
        "<aside>Popular elsewhere: ten things</aside>"
        "<footer>Copyright 2024 Example Corp. All rights reserved.</footer>"
        "<script>console.log('tracking')</script></body></html>"
    )


@dataclasses.dataclass
class Recorder:
    """A VerbContext progress callback that remembers what it was told."""

    calls: list[tuple[int, int]] = dataclasses.field(default_factory=list)

    async def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))


def context(
    settings: Settings,
    http: aiohttp.ClientSession,
    *,
    cancelled: Callable[[], Awaitable[bool]] | None = None,
) -> tuple[registry.VerbContext, Recorder]:
    recorder = Recorder()
    ctx = registry.VerbContext(http=http, settings=settings, progress=recorder, cancelled=cancelled)
    return ctx, recorder
