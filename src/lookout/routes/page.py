"""The web page: GET / (the app shell, revalidated with an ETag) and its static assets under
/app/<version>/ (cached for a year: the version is a hash of every asset, so a new release is a
new URL). No build step: the files under lookout/web/app are served as they are."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
from collections.abc import Iterator
from importlib.resources.abc import Traversable

from aiohttp import web

from lookout import errors

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on same-origin
# POSTs, and cookie writes are checked against the Origin.
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
LONG_CACHE = "public, max-age=31536000, immutable"
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
}
VERSION_MARK = "{{version}}"


def _walk(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, bytes]]:
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            yield from _walk(entry, f"{prefix}{entry.name}/")
        elif "." + entry.name.rsplit(".", 1)[-1] in TYPES:
            yield f"{prefix}{entry.name}", entry.read_bytes()


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


@dataclasses.dataclass(frozen=True)
class Site:
    """The page and its assets, read from the package once."""

    version: str
    index_html: bytes
    assets: dict[str, bytes]

    @classmethod
    def load(cls) -> Site:
        web_dir = importlib.resources.files("lookout.web")
        assets = dict(_walk(web_dir.joinpath("app")))
        digest = hashlib.sha256()
        for name, body in assets.items():
            digest.update(name.encode() + b"\0" + body + b"\0")
        version = digest.hexdigest()[:12]
        shell = web_dir.joinpath("index.html").read_text("utf-8").replace(VERSION_MARK, version)
        return cls(version=version, index_html=shell.encode("utf-8"), assets=assets)

    async def index(self, request: web.Request) -> web.Response:
        """The app shell: no-cache + ETag, so a release is picked up on the next load."""
        etag = _etag(self.index_html)
        headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache", "ETag": etag}
        if etag in request.headers.get("If-None-Match", ""):
            return web.Response(status=304, headers=headers)
        return web.Response(
            body=self.index_html, content_type="text/html", charset="utf-8", headers=headers
        )

    async def asset(self, request: web.Request) -> web.Response:
        """A versioned asset; a stale version still gets today's file, but not cached long."""
        name = request.match_info["path"]
        body = self.assets.get(name)
        if body is None:
            raise errors.NotFound("No such file of the web page.")
        current = request.match_info["version"] == self.version
        headers = {
            **SECURITY_HEADERS,
            "Cache-Control": LONG_CACHE if current else "no-cache",
            "ETag": _etag(body),
        }
        kind = TYPES["." + name.rsplit(".", 1)[-1]]
        return web.Response(body=body, headers={**headers, "Content-Type": kind})
