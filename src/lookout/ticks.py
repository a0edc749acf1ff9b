"""The periodic ticks: each minute, a message to every periodic actor whose cron is due.

Our own loop rather than periodiq's scheduler, for two reasons: periodiq's waits on SIGALRM, so
it runs only in a process's main thread (`lookout dev` runs this loop as a thread of its worker
process instead of a process of its own), and its entry point imports the actor modules to find
them (the whole worker stack, 110 MiB PSS, to send six messages; lookout.periodic is the table
now). What periodiq did is kept: a tick at start-up (unless the minute is nearly over), then one
at each due minute, stamped `scheduled_at` so the workers' PeriodiqMiddleware drops a late one;
no catch-up of missed minutes; each message sent once per due minute. Several schedulers send
each tick several times, as before: the dispatcher makes a duplicate tick a no-op.

A tick that finds Redis down is retried every RETRY_EVERY_S for SEND_RETRY_S, then skipped with
a warning (the next tick catches up; tests/reliability/test_faults_redis.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import multiprocessing
import threading
from collections.abc import Callable, Iterable
from typing import Any

import dramatiq
import redis

from lookout import periodic

logger = logging.getLogger(__name__)

LATE_IN_MINUTE_S = 55  # started later in a minute than this: the first tick is the next minute's
SEND_RETRY_S = 20.0  # well inside the minute between two ticks
RETRY_EVERY_S = 1.0
MINUTE = dt.timedelta(minutes=1)

Send = Callable[[dramatiq.Message[Any]], object]


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def due(entries: Iterable[periodic.Periodic], at: dt.datetime) -> list[periodic.Periodic]:
    """The entries whose cron matches `at`'s minute."""
    from croniter import croniter  # with dateutil, ~2 MiB: only where ticks are sent

    return [entry for entry in entries if croniter.match(entry.cron, at)]


def message(entry: periodic.Periodic, at: dt.datetime) -> dramatiq.Message[Any]:
    """What `actor.send_with_options(scheduled_at=...)` enqueues, without the actor."""
    return dramatiq.Message(
        queue_name=entry.queue_name, actor_name=entry.actor_name, args=(), kwargs={},
        options={"scheduled_at": at.isoformat()},
    )  # fmt: skip


class Ticker:
    """Sends the ticks through `send` (a broker's `enqueue`) until `stop` is set."""

    def __init__(
        self,
        send: Send,
        *,
        stop: threading.Event | None = None,
        entries: Iterable[periodic.Periodic] = periodic.ALL,
        clock: Callable[[], dt.datetime] = _utcnow,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self.send, self.entries, self.clock = send, tuple(entries), clock
        self.stop = stop or threading.Event()
        self.wait = wait or self.stop.wait  # True once stopped

    def run(self) -> None:
        now = self.clock()
        if now.second > LATE_IN_MINUTE_S and self.wait(60 - now.second - now.microsecond / 1e6):
            return
        last: dt.datetime | None = None
        while not self.stop.is_set():
            now = self.clock().replace(microsecond=0)
            minute = now.replace(second=0)
            if last is None or minute > last:  # once a minute, even if the clock steps back
                self.tick(now)
                last = minute
            if self.wait(max(0.05, (last + MINUTE - self.clock()).total_seconds())):
                return

    def tick(self, at: dt.datetime) -> None:
        for entry in due(self.entries, at):
            logger.info("Scheduling %s at %s.", entry.actor_name, at.isoformat())
            self._send(entry, at)

    def _send(self, entry: periodic.Periodic, at: dt.datetime) -> None:
        tries = max(1, int(SEND_RETRY_S / RETRY_EVERY_S))
        for attempt in range(tries):
            try:
                self.send(message(entry, at))
                return
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if attempt == tries - 1 or self.wait(RETRY_EVERY_S):
                    logger.warning("tick of %s skipped: %s", entry.actor_name, exc)
                    return


def first_worker_process() -> bool:
    """Whether this is the first worker process the `dramatiq` command started (it starts them
    first, in order, as multiprocessing's Process-1, Process-2, ...), or a process that runs
    its one worker itself (`lookout dev-serve`: no multiprocessing parent)."""
    return (
        multiprocessing.parent_process() is None
        or multiprocessing.current_process().name == "Process-1"
    )


class InWorker(dramatiq.Middleware):
    """LOOKOUT_WORKER_SCHEDULER (`lookout dev` sets it): the first worker process (or the
    one process of `lookout dev-serve`) sends the ticks from a thread, in place of a `lookout
    scheduler` process of its own."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def after_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        if not first_worker_process():
            return
        ticker = Ticker(broker.enqueue, stop=self._stop)
        self._thread = threading.Thread(target=ticker.run, name="ticks", daemon=True)
        self._thread.start()
        logger.info("sending the periodic ticks from this worker process")

    def before_worker_shutdown(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=RETRY_EVERY_S + 1)
