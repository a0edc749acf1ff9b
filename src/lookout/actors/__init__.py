"""Dramatiq actors. `lookout.broker.setup()` installs the real broker and declares them all.

An actor module may be imported before setup() (a test, a service enqueuing a message); its
actors are then declared on this placeholder, which knows the options our middleware adds
(periodic, async), and setup() rebinds them to the real broker.
"""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware.asyncio import AsyncIO
from periodiq import PeriodiqMiddleware


def _placeholder() -> StubBroker:
    stub = StubBroker()
    stub.add_middleware(AsyncIO())
    stub.add_middleware(PeriodiqMiddleware())
    return stub


dramatiq.set_broker(_placeholder())
