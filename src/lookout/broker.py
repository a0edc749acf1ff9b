"""The Dramatiq broker: Redis + AsyncIO + periodiq + our per-process resources.

`setup()` sets the global broker before any actor module is imported, then imports them all.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware.asyncio import AsyncIO
from periodiq import PeriodiqMiddleware

from lookout import wakeup
from lookout.actors import runtime
from lookout.ops import messages, shutdown
from lookout.settings import Settings

# Ticks older than this are dropped by workers: a late dispatcher run is worse than a skipped one.
PERIODIQ_SKIP_DELAY_S = 50

logger = logging.getLogger(__name__)

_current: tuple[str, dramatiq.Broker] | None = None


ENQUEUE_BATCH = 500  # messages a pipelined round trip


class Broker(RedisBroker):
    """Dramatiq's Redis broker, plus `enqueue_many`: what `enqueue` does for each message (same
    middleware hooks, same Lua script), sent in pipelined batches. The dispatcher enqueues every
    due run each minute; a round trip a message cost ~150 us of CPU each, ~40 us pipelined
    (bench/watches.py: 10,000 enqueued in 2.55 s before, 0.52 s now).

    A batch that fails to send leaves its runs queued, as a failed `send` does: the dispatcher
    enqueues runs still queued after a minute again.

    Idle consumers block until a message is published for them (lookout.wakeup): every enqueue
    also publishes its queue's wake-up, once a batch for `enqueue_many`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._local = threading.local()
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self.waker = wakeup.Waker(self)
        self.add_middleware(wakeup.StopWaking())

    @property
    def consumer_class(self) -> type[wakeup.Consumer]:
        return wakeup.Consumer

    # Dramatiq's enqueue reads its Lua script from `scripts` each call: inside enqueue_many,
    # this thread reads one bound to the batch's pipeline; every other thread the broker's own.
    @property
    def scripts(self) -> dict[str, Any]:
        return getattr(self._local, "scripts", None) or self._scripts

    @scripts.setter
    def scripts(self, value: dict[str, Any]) -> None:
        self._scripts = value

    def enqueue(self, message: dramatiq.Message[Any], *, delay: int | None = None) -> Any:
        sent = super().enqueue(message, delay=delay)
        woken = getattr(self._local, "woken", None)
        if woken is None:
            self._wake({sent.queue_name})
        else:  # inside enqueue_many: once the batch is sent
            woken.add(sent.queue_name)
        return sent

    def enqueue_many(self, messages: Sequence[dramatiq.Message[Any]]) -> None:
        for start in range(0, len(messages), ENQUEUE_BATCH):
            pipeline = self.client.pipeline(transaction=False)
            dispatch = functools.partial(self._scripts["dispatch"], client=pipeline)
            self._local.scripts = {**self._scripts, "dispatch": dispatch}
            woken: set[str] = set()
            self._local.woken = woken
            try:
                for message in messages[start : start + ENQUEUE_BATCH]:
                    self.enqueue(message)
            finally:
                del self._local.scripts, self._local.woken
            pipeline.execute()
            self._wake(woken)

    def _wake(self, queue_names: set[str]) -> None:
        """Publish the queues' wake-ups. The message is in Redis already: a failed publish is
        not a failed send (a consumer finds the message within wakeup.HOUSEKEEP_S)."""
        try:
            for queue_name in queue_names:
                self.client.publish(wakeup.channel(self.namespace, queue_name), b"")
        except redis.RedisError as exc:
            logger.warning("queue wake-up not published: %s", exc)


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
