"""The workers' Dramatiq broker: Redis (lookout.redis_broker) + AsyncIO + periodiq (where actors
run) + our per-process resources.

`setup()` sets the global broker before any actor module is imported, then imports them all.
A process that only sends (`lookout web`) sets it up with `runs_actors=False`: without periodiq's
middleware, whose `periodic` option only the processes running the periodic actors read, so
periodiq and pendulum (with croniter and dateutil, imported where a cadence is first read) stay
out of it: `lookout web` 70.1 -> 67.8 MiB RSS once its app is made, 121.9 -> 119.5 MiB after a
chat turn on a real article (issue #30's target: 120).
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

import dramatiq
from dramatiq.middleware.asyncio import AsyncIO

from lookout import redis_broker, ticks
from lookout.actors import runtime
from lookout.ops import messages, shutdown
from lookout.settings import Settings

# Ticks older than this are dropped by workers: a late dispatcher run is worse than a skipped one.
PERIODIQ_SKIP_DELAY_S = 50

logger = logging.getLogger(__name__)

_current: tuple[str, bool, dramatiq.Broker] | None = None


def build(settings: Settings, *, runs_actors: bool = True) -> redis_broker.Broker:
    broker = redis_broker.Broker(url=settings.redis_url)
    broker.add_middleware(AsyncIO())
    if runs_actors:
        from periodiq import PeriodiqMiddleware

        broker.add_middleware(PeriodiqMiddleware(skip_delay=PERIODIQ_SKIP_DELAY_S))
    broker.add_middleware(runtime.Resources(settings))
    broker.add_middleware(messages.Observability(settings))  # request ids across the queue
    broker.add_middleware(shutdown.GracefulStop(settings.shutdown_grace_s))
    if settings.worker_scheduler:
        broker.add_middleware(ticks.InWorker())
    return broker


def setup(settings: Settings, *, runs_actors: bool = True) -> dramatiq.Broker:
    """Install the broker for this process (once per Redis URL) and declare every actor.
    `runs_actors=False`: this process only sends (see the module's docstring)."""
    global _current
    if _current is not None and runs_actors and not _current[1]:
        # Its periodic actors were declared without the option periodiq reads (whatever the
        # Redis URL: a new broker would rebind those same actors).
        raise RuntimeError("this process set up a broker that only sends")
    if _current is not None and _current[0] == settings.redis_url:
        return _current[2]
    broker = build(settings, runs_actors=runs_actors)
    dramatiq.set_broker(broker)
    _current = (settings.redis_url, runs_actors, broker)
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
