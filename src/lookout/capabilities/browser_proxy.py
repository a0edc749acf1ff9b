"""The browser's only way out: a local forward proxy that applies the fetcher's SSRF guard to
every request Chromium makes (documents, subresources, redirects, XHR/fetch, WebSockets).

Chromium is started with `--proxy-server` pointing here and `--proxy-bypass-list=<-loopback>`, so
not even loopback is reached directly. Each destination is checked with `guard.Policy` (scheme,
ports, metadata, private networks), its name resolved ONCE through `guard.GuardedResolver` and the
connection opened to the checked address: DNS rebinding stays closed because Chromium never
resolves names itself (a proxied request carries the name) and the socket goes to what was checked.

One request per client connection for plain http (the request is rewritten to `Connection: close`),
so a kept-alive connection can never carry a second request to another host past the check. A
request body is forwarded by its Content-Length or, with `Transfer-Encoding: chunked` (a streamed
fetch() upload), chunk by chunk as it came, re-framed by us (bounded by MAX_BODY); any other
transfer coding, or both framings at once (the request-smuggling shape), is refused with 400.
HTTPS and WebSockets come as CONNECT host:port, checked the same way, then piped.

Hand-written (≈150 lines on asyncio streams) rather than a proxy library: the point is that the
resolution and the check are the guard's own objects; proxy.py and mitmproxy were not measured
here for want of time, and either would need its DNS and connect steps replaced to pin addresses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiohttp import abc
from yarl import URL

from lookout import errors
from lookout.capabilities import guard

logger = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024
# A request body the browser sends (a form post, an XHR upload) is forwarded up to this size.
MAX_BODY = 16 * 1024 * 1024
_MAX_CHUNK_LINE = 1024
_HOP = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})
_PIPE_CHUNK = 64 * 1024


class GuardedProxy:
    """Listens on 127.0.0.1 (ephemeral port); `refused` counts what the guard turned away."""

    def __init__(
        self,
        policy: guard.Policy,
        *,
        resolver: abc.AbstractResolver | None = None,
        connect_timeout_s: float = 5.0,
    ) -> None:
        self.policy = policy
        self.resolver = guard.GuardedResolver(policy, resolver)
        self.connect_timeout_s = connect_timeout_s
        self.refused: list[str] = []
        self.served = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> str:
        """Start listening; the proxy's URL for `--proxy-server`."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        for writer in list(self._open):
            writer.transport.abort()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            await self._one(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._open.discard(writer)
            writer.transport.abort()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            await _answer(writer, 431, "request head too large")
            return
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            await _answer(writer, 400, "bad request line")
            return
        method, target, _version = parts
        if method == "CONNECT":
            await self._tunnel(target, reader, writer)
        else:
            await self._forward(method, target, lines[1:], reader, writer)

    async def _open_checked(
        self, url: URL, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to the checked, pinned address of `url`, or None (refusal answered)."""
        try:
            url = self.policy.check_url(url)
            assert url.raw_host is not None and url.port is not None
            answers = await self.resolver.resolve(url.raw_host, url.port)
        except errors.BlockedDestination as exc:
            self.refused.append(str(url))
            logger.info("browser request refused: %s", exc.message)
            await _answer(writer, 403, exc.message)
            return None
        except OSError as exc:
            await _answer(writer, 502, f"could not resolve {url.raw_host}: {exc}")
            return None
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(answers[0]["host"], url.port), self.connect_timeout_s
            )
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"could not connect to {url.raw_host}: {exc}")
            return None

    async def _tunnel(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            await _answer(writer, 400, "CONNECT needs host:port")
            return
        # https is the scheme a tunnel carries; its port is checked as written.
        upstream = await self._open_checked(URL.build(scheme="https", host=host.strip("[]"),
                                                      port=int(port)), writer)  # fmt: skip
        if upstream is None:
            return
        self.served += 1
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await _splice(reader, writer, *upstream)

    async def _forward(
        self,
        method: str,
        target: str,
        headers: list[str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        try:
            url = URL(target)
        except ValueError:
            url = URL()
        if url.scheme != "http" or not url.raw_host:
            await _answer(writer, 400, "a proxy request needs an absolute http URL")
            return
        try:
            framing = _framing(headers)
        except _BadBody as exc:
            await _answer(writer, exc.status, str(exc))
            return
        upstream = await self._open_checked(url, writer)
        if upstream is None:
            return
        self.served += 1
        up_reader, up_writer = upstream
        kept = [line for line in headers if line and line.split(":", 1)[0].lower() not in _HOP]
        request = f"{method} {url.raw_path_qs or '/'} HTTP/1.1\r\n"
        up_writer.write(("\r\n".join([request.rstrip("\r\n"), *kept, "Connection: close"]) +
                         "\r\n\r\n").encode("latin-1"))  # fmt: skip
        try:
            if framing is _CHUNKED:
                await _copy_chunked(reader, up_writer)
            elif framing:
                up_writer.write(await reader.readexactly(framing))
            await up_writer.drain()
        except _BadBody as exc:
            up_writer.transport.abort()
            await _answer(writer, exc.status, str(exc))
            return
        # Nothing more is read from the client: a second request must come on a new connection.
        try:
            await _pipe(up_reader, writer)
        finally:
            up_writer.transport.abort()


_CHUNKED = -1  # the framing of a chunked body (else: its Content-Length, 0 for none)


class _BadBody(Exception):
    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.status = 413 if too_large else 400


def _framing(headers: list[str]) -> int:
    """The body's framing: its length or _CHUNKED; _BadBody when it is refused."""
    lengths, codings = [], []
    for line in headers:
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "content-length":
            lengths.append(value)
        elif name == "transfer-encoding":
            codings += [c.strip().lower() for c in value.split(",") if c.strip()]
    if codings and lengths:
        raise _BadBody("a request has Content-Length or Transfer-Encoding, not both")
    if codings:
        if codings != ["chunked"]:
            raise _BadBody("only the chunked transfer coding is forwarded")
        return _CHUNKED
    if len(set(lengths)) > 1 or (lengths and not lengths[0].isdigit()):
        raise _BadBody("the request's Content-Length is not one number")
    length = int(lengths[0]) if lengths else 0
    if length > MAX_BODY:
        raise _BadBody(f"a request body is at most {MAX_BODY} bytes", too_large=True)
    return length


async def _copy_chunked(reader: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Forward a chunked body, validated and re-framed chunk by chunk, trailers dropped."""
    total = 0
    while True:
        line = await _line(reader)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _BadBody("a chunk size is not a hexadecimal number") from None
        if size_text.startswith((b"-", b"+", b"0x", b"0X")) or size < 0:
            raise _BadBody("a chunk size is not a hexadecimal number")
        total += size
        if total > MAX_BODY:
            raise _BadBody(f"a request body is at most {MAX_BODY} bytes", too_large=True)
        if size == 0:
            while await _line(reader):  # trailers, up to the blank line: not forwarded
                pass
            sink.write(b"0\r\n\r\n")
            return
        data = await reader.readexactly(size + 2)
        if data[-2:] != b"\r\n":
            raise _BadBody("a chunk does not end where its size says")
        sink.write(b"%x\r\n" % size + data)
        await sink.drain()


async def _line(reader: asyncio.StreamReader) -> bytes:
    line = await reader.readuntil(b"\r\n")
    if len(line) > _MAX_CHUNK_LINE:
        raise _BadBody("a chunk line is too long")
    return line[:-2]


async def _answer(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    body = f"Lookout's browser guard: {message}\n".encode()
    writer.write(
        f"HTTP/1.1 {status} Refused\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while chunk := await source.read(_PIPE_CHUNK):
            sink.write(chunk)
            await sink.drain()


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    pipes = [
        asyncio.ensure_future(_pipe(reader, up_writer)),
        asyncio.ensure_future(_pipe(up_reader, writer)),
    ]
    try:
        # Either side closing ends the tunnel: no half-open pipe outlives its page.
        await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pipe in pipes:
            pipe.cancel()
        up_writer.transport.abort()
