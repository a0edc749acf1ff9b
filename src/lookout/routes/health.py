"""Liveness and readiness."""

from __future__ import annotations

import asyncio

from aiohttp import web

from lookout import appkeys
from lookout.ops import status

_CHECK_TIMEOUT_S = 2.0


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def _postgres(app: web.Application) -> None:
    await status.ping_database(app[appkeys.DB])


async def _redis(app: web.Application) -> None:
    await app[appkeys.REDIS].ping()


async def readyz(request: web.Request) -> web.Response:
    """200 when Postgres and Redis both answer; 503 naming the ones that did not."""
    checks = {"postgres": _postgres, "redis": _redis}
    results = await asyncio.gather(
        *(asyncio.wait_for(check(request.app), _CHECK_TIMEOUT_S) for check in checks.values()),
        return_exceptions=True,
    )
    status = {
        name: "ok" if not isinstance(result, BaseException) else "unavailable"
        for name, result in zip(checks, results, strict=True)
    }
    failed = [name for name, state in status.items() if state != "ok"]
    return web.json_response({"ok": not failed, "checks": status}, status=503 if failed else 200)
