"""Per-worker-process resources, opened on the Dramatiq AsyncIO loop and closed at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

import aiohttp
import asyncpg
import dramatiq
import redis.asyncio as aioredis
from dramatiq.asyncio import get_event_loop_thread

from lookout import loops, redis_client
from lookout.access import credits
from lookout.access.services import Services
from lookout.agent import graph
from lookout.capabilities import browser, fetch, readers
from lookout.db import pool
from lookout.settings import Settings

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class State:
    settings: Settings
    db: asyncpg.Pool
    agent: graph.OnDemand  # the saver and the graph, opened by the first turn that needs them
    redis: aioredis.Redis
    http: aiohttp.ClientSession
    browser: browser.Pool
    stale_sweep: credits.StaleSweep = dataclasses.field(default_factory=credits.StaleSweep)

    @property
    def services(self) -> Services:
        return Services(
            db=self.db, redis=self.redis, http=self.http, settings=self.settings,
            browser=self.browser,
        )  # fmt: skip


_state: State | None = None


def current() -> State:
    """The resources of this worker process; only valid inside an actor."""
    if _state is None:
        raise RuntimeError("worker resources are not open (is the Resources middleware installed?)")
    return _state


class Resources(dramatiq.Middleware):
    """Open pools once per worker process on the AsyncIO loop; close them in reverse order."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stack: contextlib.AsyncExitStack | None = None

    def before_worker_boot(self, broker: dramatiq.Broker, worker: Any) -> None:
        # Not after_worker_boot: worker threads already consume messages by then.
        loop_thread = get_event_loop_thread()
        if loop_thread is None:
            raise RuntimeError("the AsyncIO middleware must come before Resources")
        loop_thread.run_coroutine(self._open())

    def after_worker_shutdown(self, broker: dramatiq.Broker, worker: Any) -> None:
        # After, not before: messages still running in the grace period use the pools.
        loop_thread = get_event_loop_thread()
        if loop_thread is not None and self._stack is not None:
            loop_thread.run_coroutine(self._close())

    async def _open(self) -> None:
        global _state
        settings = self.settings
        stack = contextlib.AsyncExitStack()
        db = await stack.enter_async_context(
            pool.pool_context(
                settings.database_url, min_size=1, max_size=settings.worker_threads + 2
            )
        )
        agent = graph.OnDemand(settings.database_url, db, max_size=settings.worker_threads + 2)
        stack.push_async_callback(agent.aclose)
        redis = redis_client.connect(settings.redis_url)
        stack.push_async_callback(redis.aclose)
        http = await stack.enter_async_context(fetch.open_session(settings))
        stack.push_async_callback(asyncio.to_thread, readers.close)  # started by a first page
        # Chromium starts on the first page that needs it, not here.
        pages = browser.Pool(settings)
        stack.push_async_callback(pages.close)
        self._stack = stack
        _state = State(
            settings=settings, db=db, agent=agent, redis=redis, http=http, browser=pages,
        )  # fmt: skip
        loops.freeze_heap()
        loop = type(asyncio.get_running_loop())
        logger.info("worker resources open on %s.%s", loop.__module__, loop.__qualname__)

    async def _close(self) -> None:
        global _state
        _state = None
        assert self._stack is not None
        await self._stack.aclose()
        self._stack = None
