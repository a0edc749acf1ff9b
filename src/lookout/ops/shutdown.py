"""Graceful shutdown: turns in flight get a grace period, then are cut off cleanly.

Web (SIGTERM → aiohttp's shutdown): `drain` lets running turns finish for the grace period,
cancels the rest (ops.instrument answers them "interrupted"), then ends every open SSE stream so
no handler holds the process. Workers (SIGTERM → Dramatiq stops taking messages): `GracefulStop`
lets running messages finish for the grace period, then interrupts them; their run or job goes
back to the queue (ops.instrument) and Dramatiq's retry or the sweepers deliver it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import dramatiq
from aiohttp import web
from aiohttp_sse import EventSourceResponse
from dramatiq.middleware.shutdown import Shutdown
from dramatiq.middleware.threading import raise_thread_exception

from lookout import appkeys, settings
from lookout.ops import metrics

logger = logging.getLogger(__name__)

T = TypeVar("T")
CANCEL_WAIT_S = settings.SHUTDOWN_CANCEL_WAIT_S  # for cut-off turns to answer "interrupted"
REPEATED_STOP_S = 5.0  # a stop signal again within this is the same stop, heard twice


async def drain(app: web.Application) -> None:
    """on_shutdown: finish or cut off the turns, then close the SSE streams."""
    turns = app[appkeys.TURNS]
    running = set(turns)
    grace = app[appkeys.SETTINGS].shutdown_grace_s
    if running:
        logger.info("shutdown: waiting up to %.0f s for %d turn(s)", grace, len(running))
        _, late = await asyncio.wait(running, timeout=grace)
        for task in late:
            task.cancel()
        if late:
            logger.warning("shutdown: cut off %d turn(s) after the grace period", len(late))
            await asyncio.wait(late, timeout=CANCEL_WAIT_S)
    streams = app[appkeys.STREAMS]
    for stream in list(streams):
        if isinstance(stream, EventSourceResponse):
            with contextlib.suppress(RuntimeError):
                stream.stop_streaming()


async def until_stopped(
    response: EventSourceResponse, frames: AsyncIterator[T]
) -> AsyncIterator[T]:
    """`frames` until they end or the stream stops (client gone, or `drain`); counts the stream."""
    stopped = asyncio.ensure_future(response.wait())
    metrics.SSE_STREAMS.inc()
    try:
        while True:
            following = asyncio.ensure_future(anext(frames))
            await asyncio.wait({following, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await following
                return
            try:
                yield following.result()
            except StopAsyncIteration:
                return
    finally:
        metrics.SSE_STREAMS.dec()
        stopped.cancel()


class GracefulStop(dramatiq.Middleware):
    """After the grace period, interrupt the messages still running (Dramatiq's Shutdown)."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self._running: set[int] = set()
        self._lock = threading.Lock()

    def before_process_message(self, broker: dramatiq.Broker, message: Any) -> None:
        with self._lock:
            self._running.add(threading.get_ident())

    def after_process_message(self, broker: dramatiq.Broker, message: Any, **_: Any) -> None:
        with self._lock:
            self._running.discard(threading.get_ident())

    after_skip_message = after_process_message

    def after_worker_boot(self, broker: dramatiq.Broker, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():  # where handlers are set
            _hear_stop_once(signal.SIGTERM)

    def before_worker_shutdown(self, broker: dramatiq.Broker, worker: Any) -> None:
        timer = threading.Timer(self.grace_s, self._interrupt)
        timer.daemon = True
        timer.start()

    def _interrupt(self) -> None:
        with self._lock:
            late = list(self._running)
        for thread_id in late:
            logger.warning("shutdown: grace period over, interrupting a running message")
            # The AsyncIO middleware turns this into a cancellation of the actor's coroutine.
            raise_thread_exception(thread_id, Shutdown)  # type: ignore[no-untyped-call]


def _hear_stop_once(signum: int) -> None:
    """In a Dramatiq worker process: the same stop signal heard again within
    REPEATED_STOP_S of the first is not Dramatiq's "kill now".

    A Procfile host (honcho, Heroku) sends SIGTERM to every process at once, and Dramatiq's
    main process forwards its own to each worker process: each heard it twice, took the second
    for "kill now" and raised SystemExit past its graceful stop. GracefulStop never ran, the
    worker threads kept the process alive, and the host's SIGKILL ended it mid-turn. A second
    signal later than that still kills.
    """
    handler = signal.getsignal(signum)
    if not callable(handler) or "worker_process" not in getattr(handler, "__qualname__", ""):
        return  # not Dramatiq's worker process (a test's worker thread, the scheduler)
    first_at: float | None = None

    def once(number: int, frame: Any) -> None:
        nonlocal first_at
        now = time.monotonic()
        if first_at is None:
            first_at = now
        elif now - first_at < REPEATED_STOP_S:
            logger.info("shutdown: signal %d again, %.2f s after the first: ignored", number,
                        now - first_at)  # fmt: skip
            return
        handler(number, frame)

    signal.signal(signum, once)
