"""`lookout dev`'s one process: the web app and a Dramatiq worker (which sends the ticks) together.

The Procfile's web, worker and scheduler are separate processes for deploys, where each scales
on its own. On one machine that costs an interpreter each holding the whole stack (~110 MiB PSS
apiece idle), plus Dramatiq's CLI parent and honcho's wrappers: bench/footprint.py measured the
idle embedded stack at 324 MiB PSS, 3.65x changedetection.io's. Here the web process also runs
the worker's threads on their own event loop (Dramatiq's AsyncIO middleware), so the modules,
the page readers and the heap are held once. Pages are read in reader processes
(lookout.capabilities.readers): a worker's page work does not hold the web's event loop.

Stop (SIGINT/SIGTERM, as aiohttp hears them): the worker stops taking messages at once and its
running messages get the grace period (ops.shutdown.GracefulStop) while the web drains its own
turns for the same period; then the pools close.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import dramatiq
from aiohttp import web

from lookout import appkeys

logger = logging.getLogger(__name__)

READY = "Worker process is ready for action."  # as Dramatiq's CLI says it: tools wait for it


def add_worker(application: web.Application, threads: int) -> None:
    """Run a Dramatiq worker of `threads` threads for as long as `application` is open."""
    stop_ms = int((application[appkeys.SETTINGS].shutdown_grace_s + 10) * 1000)
    running: list[dramatiq.Worker] = []
    stopping: list[asyncio.Future[None]] = []

    async def worker_ctx(app: web.Application) -> AsyncIterator[None]:
        broker = dramatiq.get_broker()
        broker.emit_after("process_boot")
        worker = dramatiq.Worker(broker, worker_threads=threads)
        await asyncio.to_thread(worker.start)  # Resources opens the worker's pools
        running.append(worker)
        logger.info(READY)
        yield
        await (stopping[0] if stopping else asyncio.to_thread(worker.stop, stop_ms))

    async def stop_taking(app: web.Application) -> None:
        # Alongside the web's drain, not after it: both wait out the one grace period.
        if running:
            stopping.append(asyncio.ensure_future(asyncio.to_thread(running[0].stop, stop_ms)))

    application.cleanup_ctx.append(worker_ctx)  # opened last, closed first
    application.on_shutdown.insert(0, stop_taking)
