"""Watched pages for the watch benchmarks, served from their own process.

    .venv/bin/python bench/_pages.py --port PORT --count N

Page `i` is a small catalogue page (~4 KB: navigation, a list of items, a footer). Each page has a
version; `POST /_change` with a JSON list of page numbers bumps their versions, which rewrites one
item line of each (a real content change that any change detector must report). Nothing else on
a page ever changes, so any other reported change is a false positive.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from aiohttp import web

ITEMS = 12
COLOURS = ("red", "blue", "green", "black", "white", "amber", "teal", "grey", "olive", "plum")
THINGS = ("kettle", "lamp", "chair", "teapot", "clock", "radio", "bench", "mirror", "vase", "rug")


def item(page: int, slot: int, version: int) -> str:
    """One item line; only the slot that a version rewrote differs between versions."""
    seed = page * 31 + slot * 7 + (version if slot == version % ITEMS else 0) * 13
    colour, thing = COLOURS[seed % len(COLOURS)], THINGS[(seed // 10) % len(THINGS)]
    price = 5 + (seed * 37) % 400
    return f"Item {slot + 1}: {colour} {thing}, {price}.00 EUR, ref {page}-{slot}-{seed}"


def html(page: int, version: int) -> str:
    nav = "".join(f'<li><a href="/section/{n}">Section {n}</a></li>' for n in range(20))
    items = "".join(f"<li>{item(page, slot, version)}</li>" for slot in range(ITEMS))
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Catalogue {page}"
        f"</title></head><body><header><nav><ul>{nav}</ul></nav></header><main>"
        f"<h1>Catalogue {page}</h1><p>Everything we stock in aisle {page}, with prices "
        f"including tax. Delivery within three working days.</p><ul>{items}</ul>"
        "<p>Questions? Ask at the counter or write to the shop.</p></main>"
        f"<footer><ul>{nav}</ul><p>(c) Example Shop</p></footer></body></html>"
    )


def app(count: int) -> web.Application:
    versions = [0] * count

    async def page(request: web.Request) -> web.Response:
        index = int(request.match_info["index"])
        if not 0 <= index < count:
            raise web.HTTPNotFound()
        return web.Response(text=html(index, versions[index]), content_type="text/html")

    async def change(request: web.Request) -> web.Response:
        for index in await request.json():
            versions[index] += 1
        return web.json_response({"ok": True})

    application = web.Application()
    application.router.add_get("/p/{index}", page)
    application.router.add_post("/_change", change)
    return application


class Server:
    """The page server process; `url(i)` is page i, `change(ids)` edits those pages."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__)), "--port", str(self.port), "--count", str(count)]
        )
        self._wait_up()

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.port}/p/{index}"

    def change(self, indices: list[int]) -> None:
        body = json.dumps(indices).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/_change", data=body)
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)

    def _wait_up(self) -> None:
        for _ in range(200):
            try:
                with urllib.request.urlopen(self.url(0), timeout=1) as response:
                    response.read()
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the page server did not start")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    args = parser.parse_args()
    web.run_app(
        app(args.count), host="127.0.0.1", port=args.port, print=None, access_log=None,
        backlog=1024,
    )  # fmt: skip


if __name__ == "__main__":
    main()
