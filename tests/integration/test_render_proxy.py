"""The browser's guarded proxy and request bodies: Content-Length, chunked, and what it refuses.

The client side is a raw socket (what Chromium sends when a page streams a fetch() upload); the
destination is a local aiohttp server that records the bodies it received."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout.capabilities import browser_proxy, guard
from tests.integration import webpages


class Echo:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.bodies.append(body)
        return web.Response(text=f"got {len(body)} bytes")


@pytest.fixture
async def echo(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> tuple[Echo, int]:
    found = Echo()
    app = web.Application()
    app.router.add_post("/upload", found.handle)
    server = await aiohttp_server(app)
    return found, int(server.port)  # type: ignore[arg-type]


@pytest.fixture
async def proxy_port() -> AsyncIterator[int]:
    proxy = browser_proxy.GuardedProxy(guard.Policy.from_settings(webpages.make_settings()))
    url = await proxy.start()
    yield int(url.rsplit(":", 1)[1])
    await proxy.close()


async def _send(proxy_port: int, raw: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(raw)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


def _head(port: int, *headers: str) -> bytes:
    lines = [f"POST http://127.0.0.1:{port}/upload HTTP/1.1", f"Host: 127.0.0.1:{port}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def test_a_chunked_body_reaches_the_destination_whole(
    echo: tuple[Echo, int], proxy_port: int
) -> None:
    site, port = echo
    chunks = [b"lantern " * 1000, b"x", b"storm " * 5000]
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\nX-Tail: 1\r\n\r\n"
    answer = await _send(proxy_port, _head(port, "Transfer-Encoding: chunked") + body)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert site.bodies == [b"".join(chunks)]
    assert f"got {sum(map(len, chunks))} bytes".encode() in answer


async def test_a_content_length_body_still_reaches_the_destination(
    echo: tuple[Echo, int], proxy_port: int
) -> None:
    site, port = echo
    answer = await _send(proxy_port, _head(port, "Content-Length: 5") + b"hello")
    assert answer.startswith(b"HTTP/1.1 200")
    assert site.bodies == [b"hello"]


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        (("Transfer-Encoding: chunked", "Content-Length: 3"), b"3\r\nabc\r\n0\r\n\r\n", b"400"),
        (("Transfer-Encoding: gzip, chunked",), b"3\r\nabc\r\n0\r\n\r\n", b"400"),
        (("Transfer-Encoding: chunked",), b"zz\r\nabc\r\n0\r\n\r\n", b"400"),
        (("Transfer-Encoding: chunked",), b"2\r\nabc\r\n0\r\n\r\n", b"400"),
        (("Content-Length: 3", "Content-Length: 4"), b"abcd", b"400"),
        ((f"Content-Length: {browser_proxy.MAX_BODY + 1}",), b"", b"413"),
        (("Transfer-Encoding: chunked",), b"%x\r\n" % (browser_proxy.MAX_BODY + 1), b"413"),
    ],
    ids=["both-framings", "other-coding", "bad-size", "size-mismatch", "two-lengths",
         "length-too-big", "chunk-too-big"],
)  # fmt: skip
async def test_a_body_it_cannot_frame_is_refused_clearly(
    echo: tuple[Echo, int], proxy_port: int, headers: tuple[str, ...], body: bytes, status: bytes
) -> None:
    site, port = echo
    answer = await _send(proxy_port, _head(port, *headers) + body)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
    assert b"Lookout's browser guard" in answer
    assert site.bodies == []
