"""GET /v1/openapi.json and GET /v1/docs (Swagger UI shipped by the swagger-ui-py package)."""

from __future__ import annotations

import importlib.resources
import mimetypes

from aiohttp import web

from lookout import appkeys, errors
from lookout.routes import openapi

_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
)
_CACHE = "public, max-age=3600"
_STATIC_FILES = {"swagger-ui.css", "swagger-ui-bundle.js"}


def _ours(name: str) -> bytes:
    return importlib.resources.files("lookout.web").joinpath(name).read_bytes()


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(openapi.document(request.app[appkeys.SETTINGS].public_url))


async def docs_page(request: web.Request) -> web.Response:
    return web.Response(
        body=_ours("docs.html"),
        content_type="text/html",
        headers={"Content-Security-Policy": _CSP, "Cache-Control": "no-cache"},
    )


async def docs_init(request: web.Request) -> web.Response:
    return web.Response(
        body=_ours("docs-init.js"),
        content_type="application/javascript",
        headers={"Cache-Control": _CACHE},
    )


async def docs_static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in _STATIC_FILES:
        raise errors.NotFound("No such documentation asset.")
    body = importlib.resources.files("swagger_ui").joinpath("static", name).read_bytes()
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return web.Response(body=body, content_type=kind, headers={"Cache-Control": _CACHE})
