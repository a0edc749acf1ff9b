"""The fetcher against local servers: redirects, limits, encodings and typed failures."""

from __future__ import annotations

import asyncio
import gzip
import time
import zlib
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout import errors
from lookout.capabilities import fetch
from tests.integration import webpages
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("loopback_only")

Serve = Callable[[webpages.Site], Awaitable[TestServer]]
SETTINGS = webpages.make_settings()


@pytest.fixture
def serve(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> Serve:
    async def start(site: webpages.Site) -> TestServer:
        return await aiohttp_server(site.app())

    return start


async def _fetch(url: str, **options: object) -> fetch.FetchResult:
    options.setdefault("settings", SETTINGS)
    return await fetch.fetch(url, **options)  # type: ignore[arg-type]


async def _failure(url: str, **options: object) -> errors.FetchFailed:
    with pytest.raises(errors.FetchFailed) as caught:
        await _fetch(url, **options)
    return caught.value


async def test_a_page_is_fetched_with_its_metadata(serve: Serve) -> None:
    site = webpages.Site()
    site.add("/old", status=301, headers={"Location": "/new"})
    site.add("/new", "<p>café</p>", content_type="text/html; charset=utf-8")
    server = await serve(site)
    result = await _fetch(str(server.make_url("/old")))
    assert result.status == 200
    assert result.final_url == str(server.make_url("/new"))
    assert (result.content_type, result.charset) == ("text/html", "utf-8")
    assert result.body == "<p>café</p>".encode()
    assert result.elapsed_ms >= 0
    assert site.hits == ["/old", "/new"]


async def test_it_says_who_it_is_and_what_it_accepts(serve: Serve) -> None:
    site = webpages.Site()
    site.add("/", "<p>hi</p>")
    server = await serve(site)
    await _fetch(str(server.make_url("/")))
    headers = site.headers_seen[0]
    assert headers["User-Agent"] == SETTINGS.user_agent
    assert headers["Accept-Encoding"] == "gzip, deflate"
    assert headers["Accept"].startswith("text/html")


async def test_five_redirects_are_followed_and_the_sixth_is_refused(serve: Serve) -> None:
    site = webpages.Site()
    for hop in range(6):
        site.add(f"/r{hop}", status=302, headers={"Location": f"/r{hop + 1}"})
    site.add("/r6", "<p>arrived</p>")
    server = await serve(site)
    assert (await _fetch(str(server.make_url("/r1")))).body == b"<p>arrived</p>"
    failure = await _failure(str(server.make_url("/r0")))
    assert failure.details["reason"] == "redirects"
    assert "more than 5" in failure.message


async def test_a_slow_server_times_out_with_a_message_saying_so(serve: Serve) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(text="late")

    site = webpages.Site()
    site.handle("/slow", slow)
    server = await serve(site)
    started = time.monotonic()
    failure = await _failure(
        str(server.make_url("/slow")), settings=SETTINGS.replace(fetch_timeout_s=0.5)
    )
    assert time.monotonic() - started < 2
    assert failure.details["reason"] == "timeout"
    assert "Timed out after 0.5 s" in failure.message


async def test_the_time_limit_covers_a_body_that_trickles(serve: Serve) -> None:
    async def trickle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        for _ in range(50):
            await response.write(b"<p>.</p>")
            await asyncio.sleep(0.1)
        return response

    site = webpages.Site()
    site.handle("/drip", trickle)
    server = await serve(site)
    failure = await _failure(
        str(server.make_url("/drip")), settings=SETTINGS.replace(fetch_timeout_s=0.5)
    )
    assert failure.details["reason"] == "timeout"


async def test_a_declared_oversized_body_is_refused_unread(serve: Serve) -> None:
    site = webpages.Site()
    site.add("/big", b"x" * 200_000)
    server = await serve(site)
    failure = await _failure(str(server.make_url("/big")), max_bytes=100_000)
    assert failure.details["reason"] == "too_large"
    assert "larger than 0.1 MB" in failure.message


async def test_an_endless_stream_is_cut_at_the_limit(serve: Serve) -> None:
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        for _ in range(10_000):
            await response.write(b"y" * 65536)
        return response

    site = webpages.Site()
    site.handle("/endless", endless)
    server = await serve(site)
    started = time.monotonic()
    failure = await _failure(str(server.make_url("/endless")), max_bytes=1_000_000)
    assert failure.details["reason"] == "too_large"
    assert time.monotonic() - started < 3


async def test_gzip_and_deflate_bodies_are_decompressed(serve: Serve) -> None:
    text = b"<p>compressed page</p>" * 100
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    site = webpages.Site()
    site.add("/gz", gzip.compress(text), headers={"Content-Encoding": "gzip"})
    site.add("/zlib", zlib.compress(text), headers={"Content-Encoding": "deflate"})
    site.add(
        "/raw",
        raw_deflate.compress(text) + raw_deflate.flush(),
        headers={"Content-Encoding": "deflate"},
    )
    server = await serve(site)
    for path in ("/gz", "/zlib", "/raw"):
        assert (await _fetch(str(server.make_url(path)))).body == text, path


async def test_a_compression_bomb_stops_at_the_decompressed_limit(serve: Serve) -> None:
    bomb = gzip.compress(b"<p>" + b" " * 50_000_000)
    assert len(bomb) < 100_000
    site = webpages.Site()
    site.add("/bomb", bomb, headers={"Content-Encoding": "gzip"})
    server = await serve(site)
    failure = await _failure(str(server.make_url("/bomb")), max_bytes=1_000_000)
    assert failure.details["reason"] == "too_large"


async def test_an_unrequested_encoding_is_refused(serve: Serve) -> None:
    site = webpages.Site()
    site.add("/br", b"\x8b\x00\x80", headers={"Content-Encoding": "br"})
    server = await serve(site)
    failure = await _failure(str(server.make_url("/br")))
    assert failure.details["reason"] == "encoding"
    assert "'br'" in failure.message


async def test_a_malformed_content_type_is_read_not_raised(serve: Serve) -> None:
    # The standard library's header parser (through aiohttp's response.content_type) raised
    # IndexError on a parameter with no `=`: one hostile server failed a whole web.scrape call.
    site = webpages.Site()
    site.add("/odd", "<p>odd</p>", content_type="text/html;C5*")
    site.add("/junk", "<p>junk</p>", content_type="yO]zX<8;C5*")
    server = await serve(site)

    odd = await _fetch(str(server.make_url("/odd")))
    junk = await _failure(str(server.make_url("/junk")))

    assert (odd.content_type, odd.charset, odd.body) == ("text/html", None, b"<p>odd</p>")
    assert junk.details["reason"] == "content_type"
    assert "application/octet-stream" in junk.message


async def test_binary_content_types_are_refused_unless_asked_for(serve: Serve) -> None:
    site = webpages.Site()
    site.add("/logo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, content_type="image/png")
    server = await serve(site)
    url = str(server.make_url("/logo.png"))
    failure = await _failure(url)
    assert failure.details["reason"] == "content_type"
    assert "image/png" in failure.message
    assert (await _fetch(url, accept=())).content_type == "image/png"


@pytest.mark.parametrize("status", [404, 500, 503])
async def test_an_error_status_is_a_failure_naming_it(serve: Serve, status: int) -> None:
    site = webpages.Site()
    site.add("/gone", "<h1>nope</h1>", status=status)
    server = await serve(site)
    failure = await _failure(str(server.make_url("/gone")))
    assert failure.details["status"] == status
    assert f"HTTP {status}" in failure.message


async def test_conditional_get_answers_not_modified(serve: Serve) -> None:
    async def tagged(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        headers = {"ETag": '"v1"', "Last-Modified": "Wed, 01 May 2024 10:00:00 GMT"}
        return web.Response(text="<p>v1</p>", content_type="text/html", headers=headers)

    site = webpages.Site()
    site.handle("/doc", tagged)
    server = await serve(site)
    url = str(server.make_url("/doc"))
    first = await _fetch(url)
    assert (first.etag, first.last_modified) == ('"v1"', "Wed, 01 May 2024 10:00:00 GMT")
    again = await _fetch(url, etag=first.etag, last_modified=first.last_modified)
    assert again.not_modified and again.body == b""
    assert site.headers_seen[1]["If-Modified-Since"] == first.last_modified


async def test_an_unknown_name_is_a_dns_failure() -> None:
    resolver = webpages.FakeResolver({})
    failure = await _failure("http://nowhere.invalid/", resolver=resolver)
    assert failure.details["reason"] == "dns"
    assert "Could not resolve nowhere.invalid" in failure.message


async def test_a_closed_port_is_a_connect_failure(unused_tcp_port: int) -> None:
    failure = await _failure(f"http://127.0.0.1:{unused_tcp_port}/")
    assert failure.details["reason"] == "connect"
    assert f"127.0.0.1:{unused_tcp_port}" in failure.message


async def test_a_failed_tls_handshake_is_a_tls_failure(serve: Serve) -> None:
    site = webpages.Site()
    server = await serve(site)
    failure = await _failure(str(server.make_url("/")).replace("http:", "https:"))
    assert failure.details["reason"] == "tls"
    assert "TLS handshake" in failure.message


async def test_cookies_are_never_carried_between_requests(serve: Serve) -> None:
    site = webpages.Site()
    site.add("/", "<p>hi</p>", headers={"Set-Cookie": "session=secret; Path=/"})
    server = await serve(site)
    async with fetch.open_session(SETTINGS) as session:
        for _ in range(2):
            await _fetch(str(server.make_url("/")), session=session)
    assert "Cookie" not in site.headers_seen[1]


async def test_borrow_keeps_a_guarded_session_and_never_uses_a_plain_one() -> None:
    async with fetch.open_session(SETTINGS) as guarded, aiohttp.ClientSession() as plain:
        async with fetch.borrow(guarded, SETTINGS) as chosen:
            assert chosen is guarded
        async with fetch.borrow(plain, SETTINGS) as chosen:
            assert chosen is not plain
        strict = SETTINGS.replace(allow_private_networks=False)
        async with fetch.borrow(guarded, strict) as chosen:
            assert chosen is not guarded
