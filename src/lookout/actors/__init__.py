"""Dramatiq actors (layer 7, a door: may import anything below). `lookout.broker.setup()`
installs the real broker and declares them all; services never import this package, they send
by name (`lookout.queue`).

Why a placeholder broker is still installed here: nothing in the service imports an actor module
before setup() any more, but test modules (and tests/reliability scripts) do, at collection, before
any settings exist; an actor declared with no broker set would land on Dramatiq's default broker,
which refuses our `periodic` option. Declared on this placeholder (which knows the options our
middleware adds: periodic, async), setup() rebinds them to the real broker, as it does when a
process sets up a broker for another Redis URL (the test suite does).
"""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware.asyncio import AsyncIO


class _PeriodicOption(dramatiq.Middleware):
    """periodiq's `periodic` actor option, known without importing periodiq (and pendulum):
    lookout.broker imports this package in every process, `lookout web` included."""

    actor_options = {"periodic"}


def _placeholder() -> StubBroker:
    stub = StubBroker()
    stub.add_middleware(AsyncIO())
    stub.add_middleware(_PeriodicOption())
    return stub


dramatiq.set_broker(_placeholder())
