"""`lookout scheduler`: the periodic ticks (lookout.ticks), in a process that loads only what it
sends with: Dramatiq's Redis broker and the table of periodic actors (no actor module, no
service: tests/unit/test_scheduler_process.py checks what it imports)."""

from __future__ import annotations

import signal
import threading
from typing import Any

from lookout import logs, redis_broker, ticks
from lookout.settings import Settings


def run(settings: Settings) -> int:
    """Send the ticks until SIGTERM or SIGINT."""
    logs.configure(settings.log_format, settings.log_level)
    broker = redis_broker.Broker(url=settings.redis_url, middleware=[])
    stop = threading.Event()

    def stopped(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopped)
    signal.signal(signal.SIGINT, stopped)
    try:
        ticks.Ticker(broker.enqueue, stop=stop).run()
    finally:
        broker.close()
    return 0
