"""Worker middleware: follow a request across the queue, log with ids, count messages.

The request id rides in the message options (set when sending, from the sender's log context)
and is bound while the message runs; a message nobody sent from a request (a periodic tick) uses
its own message id, and the runs that tick enqueues carry it on.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import dramatiq

from lookout import logs
from lookout.ops import metrics
from lookout.settings import Settings

OPTION = "request_id"


class Observability(dramatiq.Middleware):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._started = threading.local()

    def after_process_boot(self, broker: dramatiq.Broker) -> None:
        # A worker process: replace Dramatiq's plain log format with ours.
        logs.configure(self.settings.log_format, self.settings.log_level)

    def before_enqueue(self, broker: dramatiq.Broker, message: Any, delay: int | None) -> None:
        request_id = logs.current().get("request_id")
        if request_id and OPTION not in message.options:
            message.options[OPTION] = request_id

    def before_process_message(self, broker: dramatiq.Broker, message: Any) -> None:
        # The actor's coroutine is scheduled from this thread and inherits this context.
        logs.clear()
        logs.bind(request_id=message.options.get(OPTION) or message.message_id)
        self._started.at = time.monotonic()

    def after_process_message(
        self,
        broker: dramatiq.Broker,
        message: Any,
        *,
        result: Any = None,
        exception: BaseException | None = None,
    ) -> None:
        outcome = "ok" if exception is None else type(exception).__name__
        metrics.MESSAGES.labels(message.actor_name, outcome).inc()
        started = getattr(self._started, "at", None)
        if started is not None:
            metrics.MESSAGE_DURATION.labels(message.actor_name).observe(time.monotonic() - started)
        logs.clear()

    def after_skip_message(self, broker: dramatiq.Broker, message: Any) -> None:
        metrics.MESSAGES.labels(message.actor_name, "skipped").inc()
        logs.clear()
