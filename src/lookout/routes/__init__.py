"""Every route of the web process, listed in one function."""

from __future__ import annotations

from aiohttp import web

from lookout.routes import health


def setup_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", health.healthz)
    app.router.add_get("/readyz", health.readyz)
