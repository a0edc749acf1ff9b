"""The Dramatiq broker: Redis + AsyncIO + periodiq + our per-process resources.

`setup()` sets the global broker before any actor module is imported, then imports them all.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware.asyncio import AsyncIO
from periodiq import PeriodiqMiddleware

from lookout.actors import runtime
from lookout.ops import messages, shutdown
from lookout.settings import Settings

# Ticks older than this are dropped by workers: a late dispatcher run is worse than a skipped one.
PERIODIQ_SKIP_DELAY_S = 50

_current: tuple[str, dramatiq.Broker] | None = None


ENQUEUE_BATCH = 500  # messages a pipelined round trip
PROMPT_QUEUES = frozenset({"watches", "jobs"})
PROMPT_POLL_MS = 100


class Broker(RedisBroker):
    """Dramatiq's Redis broker, plus `enqueue_many`: what `enqueue` does for each message (same
    middleware hooks, same Lua script), sent in pipelined batches. The dispatcher enqueues every
    due run each minute; a round trip a message cost ~150 us of CPU each, ~40 us pipelined
    (bench/watches.py: 10,000 enqueued in 2.55 s before, 0.52 s now).

    A batch that fails to send leaves its runs queued, as a failed `send` does: the dispatcher
    enqueues runs still queued after a minute again.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._local = threading.local()
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]

    # Dramatiq's enqueue reads its Lua script from `scripts` each call: inside enqueue_many,
    # this thread reads one bound to the batch's pipeline; every other thread the broker's own.
    @property
    def scripts(self) -> dict[str, Any]:
        return getattr(self._local, "scripts", None) or self._scripts

    @scripts.setter
    def scripts(self, value: dict[str, Any]) -> None:
        self._scripts = value

    def enqueue_many(self, messages: Sequence[dramatiq.Message[Any]]) -> None:
        for start in range(0, len(messages), ENQUEUE_BATCH):
            pipeline = self.client.pipeline(transaction=False)
            dispatch = functools.partial(self._scripts["dispatch"], client=pipeline)
            self._local.scripts = {**self._scripts, "dispatch": dispatch}
            try:
                for message in messages[start : start + ENQUEUE_BATCH]:
                    self.enqueue(message)
            finally:
                del self._local.scripts
            pipeline.execute()

    def consume(self, queue_name: str, prefetch: int = 1, timeout: int = 5000) -> Any:
        """An idle consumer backs off to polling every `timeout` ms (the worker timeout, 1 s).
        Scheduled turns and jobs arrive in bursts after idle spells: their queues poll at most
        every PROMPT_POLL_MS, so a burst is not left waiting up to a second. Cycles of 1,000
        watches 9 s apart (as bench/versus.py runs them): the first turn started 227-563 ms
        after the dispatch, 77-131 ms with this; idle, the default two worker processes use
        ~2 % more of a core (1.5 -> 3.7 %), Redis ~0.5 % more."""
        if queue_name in PROMPT_QUEUES:
            timeout = min(timeout, PROMPT_POLL_MS)
        return super().consume(queue_name, prefetch, timeout)


def build(settings: Settings) -> Broker:
    broker = Broker(url=settings.redis_url)
    broker.add_middleware(AsyncIO())
    broker.add_middleware(PeriodiqMiddleware(skip_delay=PERIODIQ_SKIP_DELAY_S))
    broker.add_middleware(runtime.Resources(settings))
    broker.add_middleware(messages.Observability(settings))  # request ids across the queue
    broker.add_middleware(shutdown.GracefulStop(settings.shutdown_grace_s))
    return broker


def setup(settings: Settings) -> dramatiq.Broker:
    """Install the broker for this process (once per Redis URL) and declare every actor."""
    global _current
    if _current is not None and _current[0] == settings.redis_url:
        return _current[1]
    broker = build(settings)
    dramatiq.set_broker(broker)
    _current = (settings.redis_url, broker)
    modules = importlib.import_module("lookout.actors.all")
    _bind_actors(broker, modules.MODULES)
    return broker


def _bind_actors(broker: dramatiq.Broker, modules: list[ModuleType]) -> None:
    """Point every actor at this broker, even one imported (and bound) before setup() ran.

    Still needed although services send by name (lookout.queue): an actor module imported before
    setup() (tests do, see lookout.actors) or a second setup() for another Redis URL leaves
    actors on the earlier broker, and `queue.send` looks them up on the current one."""
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, dramatiq.Actor) and value.broker is not broker:
                value.broker = broker
                broker.declare_actor(value)
