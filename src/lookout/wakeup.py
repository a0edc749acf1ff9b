"""Idle workers block instead of polling: a Redis pub/sub wake-up for every queue.

Dramatiq's Redis consumer (2.2.1) polls: with nothing to do, each queue's consumer runs its
fetch script once a worker timeout (1 s), in every worker process; we had the turn and job
queues poll every 100 ms so a due turn started promptly. Idle, that was most of the embedded
stack's 5.1 % of a core. A Lua script cannot block (BLPOP inside one returns at once), so:

- every enqueue also PUBLISHes `<namespace>:wake:<queue>` (one PUBLISH a pipelined batch);
- each worker process has one thread, the `Waker`, PSUBSCRIBEd to `<namespace>:wake:*`: it
  wakes the consumers of that queue (a `threading.Event` each);
- a consumer whose fetch came back empty waits on its event: a publish, an ack freeing a
  prefetch slot, the eta of a delayed message it holds, or IDLE_WAIT_S at the latest;
- what Dramatiq got from the polling fetches the Waker does itself every HOUSEKEEP_S, in one
  pipelined round trip: the heartbeat (a worker silent for 60 s is taken for dead and its
  unacked messages are redelivered) and queue maintenance for every queue, forced rather than
  Dramatiq's 1-in-1,000 chance a command (a killed worker's messages come back within
  HOUSEKEEP_S after the 60 s); a queue holding messages after it is woken (messages put back
  by maintenance, a lost publish);
- the subscription is checked before a consumer blocks: until it is confirmed (start-up, Redis
  away, reconnecting) and from the worker's shutdown on, consumers poll once a worker timeout,
  as Dramatiq does, and every consumer is woken when the subscription comes back.

Chosen over a wake-up list with BLPOP (one waiter takes a token, the other process sleeps on a
burst; tokens pile up while consumers are busy) and over Redis streams (another broker).
Measured with bench/footprint.py.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

import redis
from dramatiq.broker import MessageProxy
from dramatiq.brokers.redis import _RedisConsumer
from dramatiq.common import current_millis
from dramatiq.errors import ConnectionClosed
from dramatiq.message import Message
from dramatiq.middleware import Middleware

logger = logging.getLogger(__name__)

IDLE_WAIT_S = 60.0  # a consumer with nothing to do fetches at least this often
HOUSEKEEP_S = 15.0  # heartbeat + maintenance; Dramatiq's heartbeat timeout is 60 s
RECONNECT_S = 1.0
SUBSCRIBE_WAIT_S = 5.0


def channel(namespace: str, queue_name: str) -> str:
    return f"{namespace}:wake:{queue_name}"


class Waker:
    """One a worker process, started by the first consumer: listens, heartbeats, maintains."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self._events: dict[str, set[threading.Event]] = {}
        self._lock = threading.Lock()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None
        self.stopping = False

    def register(self, queue_name: str) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._events.setdefault(queue_name, set()).add(event)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="wakeup", daemon=True)
                self._thread.start()
        return event

    def unregister(self, queue_name: str, event: threading.Event) -> None:
        with self._lock:
            self._events.get(queue_name, set()).discard(event)

    def blocking(self) -> bool:
        """Whether a consumer may block: subscribed, and the worker is not shutting down."""
        return self._listening.is_set() and not self.stopping

    def stop(self) -> None:
        """The worker is shutting down: consumers poll again until they stop."""
        self.stopping = True
        self.wake_all()

    def wake(self, queue_name: str) -> None:
        with self._lock:
            events = list(self._events.get(queue_name, ()))
        for event in events:
            event.set()

    def wake_all(self) -> None:
        with self._lock:
            queues = list(self._events)
        for queue_name in queues:
            self.wake(queue_name)

    def _run(self) -> None:
        while True:
            try:
                self._listen()
            except redis.RedisError as exc:
                if self._listening.is_set():  # once an outage, not once a retry
                    logger.warning("queue wake-ups lost, polling until Redis is back: %s", exc)
            finally:
                self._listening.clear()
                self.wake_all()
            time.sleep(RECONNECT_S)

    def _listen(self) -> None:
        namespace = self.broker.namespace
        prefix = channel(namespace, "")
        pubsub = self.broker.client.pubsub()
        try:
            pubsub.psubscribe(prefix + "*")
            confirmed = pubsub.get_message(timeout=SUBSCRIBE_WAIT_S)
            if not confirmed or confirmed["type"] != "psubscribe":
                raise redis.ConnectionError(f"no subscription confirmed: {confirmed!r}")
            self._listening.set()
            self.wake_all()  # what was published before the subscription
            due = 0.0
            while True:
                if time.monotonic() >= due:
                    self._housekeep()
                    due = time.monotonic() + HOUSEKEEP_S
                message = pubsub.get_message(timeout=max(0.0, due - time.monotonic()))
                if message and message["type"] == "pmessage":
                    self.wake(_text(message["channel"])[len(prefix) :])
        finally:
            with contextlib.suppress(redis.RedisError, OSError):
                pubsub.close()

    def _housekeep(self) -> None:
        """Heartbeat + forced maintenance on every consumed queue, and wake the queues that
        hold messages: one pipelined round trip."""
        with self._lock:
            queues = sorted(self._events)
        if not queues:
            return
        broker = self.broker
        dispatch = broker._scripts["dispatch"]
        pipeline = broker.client.pipeline(transaction=False)
        for queue_name in queues:
            # Dramatiq's dispatch arguments (RedisBroker._dispatch), maintenance forced on; a
            # fetch of 0 messages does nothing else.
            args = [
                "fetch", current_millis(), queue_name, broker.broker_id,
                broker.heartbeat_timeout, broker.dead_message_ttl, 1,
                broker._max_unpack_size(), 0,
            ]  # fmt: skip
            dispatch(args=args, keys=[broker.namespace], client=pipeline)
        for queue_name in queues:
            pipeline.llen(f"{broker.namespace}:{queue_name}")
        sizes = pipeline.execute()[len(queues) :]
        for queue_name, size in zip(queues, sizes, strict=True):
            if size:
                self.wake(queue_name)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Consumer(_RedisConsumer):
    """Dramatiq's Redis consumer, waiting on its wake-up event instead of sleeping."""

    def __init__(self, broker: Any, queue_name: str, prefetch: int, timeout: int) -> None:
        super().__init__(broker, queue_name, prefetch, timeout)  # type: ignore[no-untyped-call]
        self.waker: Waker = broker.waker
        self.woken = self.waker.register(queue_name)

    def ack(self, message: MessageProxy) -> None:
        try:
            super().ack(message)  # type: ignore[no-untyped-call]
        finally:
            self.woken.set()  # a prefetch slot is free

    def nack(self, message: MessageProxy) -> None:
        try:
            super().nack(message)  # type: ignore[no-untyped-call]
        finally:
            self.woken.set()

    def close(self) -> None:
        self.waker.unregister(self.queue_name, self.woken)
        super().close()

    def __next__(self) -> MessageProxy | None:
        """The next message, or None after waiting (Dramatiq's worker loop then handles its
        delayed messages and its stop)."""
        try:
            message = self._cached()
            if message is not None:
                return message
            self.woken.clear()  # before the fetch: a publish after it wakes the wait below
            if self.outstanding_message_count < self.prefetch:
                wanted = self.prefetch - self.outstanding_message_count
                self.message_cache = self.broker.do_fetch(self.queue_name, wanted)
                message = self._cached()
                if message is not None:
                    return message
            self.woken.wait(self._wait_s())
            return None
        except redis.ConnectionError as exc:
            raise ConnectionClosed(exc) from None  # type: ignore[no-untyped-call]

    def _cached(self) -> MessageProxy | None:
        while self.message_cache:
            data = self.message_cache.pop(0)
            if data is None:  # Dramatiq warns of this (its #266); skip it as it does
                continue
            self.misses = 0
            message = Message.decode(data)
            self.queued_message_ids.add(message.message_id)
            return MessageProxy(message)
        return None

    def _wait_s(self) -> float:
        if not self.waker.blocking():
            return float(self.timeout) / 1000  # Dramatiq's own idle poll
        wait = IDLE_WAIT_S
        # The delayed messages this consumer's thread holds: wake when the first is due.
        held = getattr(threading.current_thread(), "delay_queue", None)
        if held is not None and held.queue:
            due_ms = held.queue[0].priority - current_millis()
            wait = min(wait, max(0.0, due_ms / 1000))
        return wait


class StopWaking(Middleware):
    """From the worker's shutdown on, consumers poll so they notice they are stopped."""

    def before_worker_shutdown(self, broker: Any, worker: Any) -> None:
        broker.waker.stop()
