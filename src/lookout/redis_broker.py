"""Dramatiq's Redis broker with queue wake-ups and batched enqueues: the one broker class every
process sends through (workers, web, the scheduler), with no actor or service imported.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from typing import Any

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker

from lookout import wakeup

logger = logging.getLogger(__name__)

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
