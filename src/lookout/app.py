"""The aiohttp application: create_app(settings), resources as cleanup contexts."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator

from aiohttp import web

from lookout import appkeys, broker, loops, middleware, redis_client, routes
from lookout.access import keys
from lookout.agent import graph
from lookout.capabilities import fetch, readers
from lookout.chat import hub
from lookout.db import pool
from lookout.ops import http as ops_http
from lookout.ops import shutdown
from lookout.settings import Settings

TURN_SHUTDOWN_GRACE_S = 30.0


async def _db_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[appkeys.SETTINGS]
    async with pool.pool_context(
        settings.database_url, min_size=settings.db_pool_min, max_size=settings.db_pool_max
    ) as db:
        app[appkeys.DB] = db
        yield


async def _redis_ctx(app: web.Application) -> AsyncIterator[None]:
    url = app[appkeys.SETTINGS].redis_url
    client = redis_client.connect(url)
    app[appkeys.REDIS] = client
    app[appkeys.HUB] = hub.Hub(client, redis_client.listener(url))
    yield
    await app[appkeys.HUB].close()
    await client.aclose()


async def _http_ctx(app: web.Application) -> AsyncIterator[None]:
    # One guarded connection pool shared by every verb call of this process.
    async with fetch.open_session(app[appkeys.SETTINGS]) as session:
        app[appkeys.HTTP] = session
        yield
    await asyncio.to_thread(readers.close)  # the page readers, if a verb call started them


async def _graph_ctx(app: web.Application) -> AsyncIterator[None]:
    # The saver and the graph open with the first chat turn (agent.graph.OnDemand).
    agent = graph.OnDemand(app[appkeys.SETTINGS].database_url, app[appkeys.DB])
    app[appkeys.AGENT] = agent
    yield
    await agent.aclose()


async def _turns_ctx(app: web.Application) -> AsyncIterator[None]:
    """Let turns in flight finish (and persist) at shutdown; close open SSE streams."""
    running: set[asyncio.Task[object]] = set()
    streams: weakref.WeakSet[web.StreamResponse] = weakref.WeakSet()
    app[appkeys.TURNS] = running
    app[appkeys.STREAMS] = streams
    yield
    for stream in list(streams):
        with contextlib.suppress(Exception):
            await stream.write_eof()
    if running:
        await asyncio.wait(running, timeout=TURN_SHUTDOWN_GRACE_S)


def create_app(
    settings: Settings, *, freeze_heap: bool = False, runs_actors: bool = True
) -> web.Application:
    """The web process's app. `freeze_heap`: once open, put the heap out of the collector's reach
    (loops.freeze_heap; for a process that serves one app, not a test session). `runs_actors`:
    False where no worker runs in this process (`lookout web`; see lookout.broker)."""
    app = web.Application(
        middlewares=[ops_http.observe, middleware.error_middleware, ops_http.bind_ids],
        client_max_size=settings.max_body_bytes,
    )
    broker.setup(settings, runs_actors=runs_actors)  # the web process enqueues jobs
    app[appkeys.SETTINGS] = settings
    app[appkeys.KEY_USAGE] = keys.KeyUsage()
    app[appkeys.KEY_CACHE] = keys.KeyCache()
    # Cleanup runs in reverse: turns finish before the pools they use close.
    app.cleanup_ctx.extend([_db_ctx, _redis_ctx, _http_ctx, _graph_ctx, _turns_ctx])
    routes.setup_routes(app)
    app.on_shutdown.append(shutdown.drain)  # before cleanup: pools are still open
    if freeze_heap:
        app.on_startup.append(_freeze_heap)  # after the cleanup contexts opened everything
    return app


async def _freeze_heap(_: web.Application) -> None:
    loops.freeze_heap()
