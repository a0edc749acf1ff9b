"""The broker's pipelined enqueue: what `enqueue` does for each message, many a round trip."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import dramatiq
import pytest
import redis

from lookout import broker, logs, redis_broker, wakeup
from lookout.actors import watches as watch_actors
from lookout.settings import Settings
from tests.integration import workers

QUEUE = "dramatiq:watches"


def _queued(client: redis.Redis) -> list[dramatiq.Message[Any]]:
    ids = client.lrange(QUEUE, 0, -1)
    return [dramatiq.Message.decode(body) for body in client.hmget(f"{QUEUE}.msgs", ids)]


def test_a_batch_enqueues_each_run_as_send_does(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_broker, "ENQUEUE_BATCH", 2)  # 5 runs: batches of 2, 2 and 1
    broker.setup(settings)
    run_ids = [uuid.uuid4() for _ in range(5)]

    logs.bind(request_id="req-dispatch")  # before_enqueue carries it into each message
    try:
        watch_actors.send_all(run_ids)
    finally:
        logs.clear()

    client = redis.Redis.from_url(settings.redis_url)
    queued = _queued(client)
    client.close()
    assert sorted(message.args[0] for message in queued) == sorted(map(str, run_ids))
    assert {message.actor_name for message in queued} == {"chat_message"}
    assert {message.options["request_id"] for message in queued} == {"req-dispatch"}
    assert len({message.options["redis_message_id"] for message in queued}) == 5


def test_another_threads_send_during_a_batch_goes_out_at_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = broker.setup(settings)
    client = redis.Redis.from_url(settings.redis_url)
    seen: list[int] = []
    started = threading.Event()
    emit_before = installed.emit_before

    def meanwhile(signal: str, *args: Any) -> None:
        # The batch's first message (its pipeline unsent): a plain send from another thread
        if signal == "enqueue" and not started.is_set():
            started.set()
            other = threading.Thread(target=watch_actors.chat_message.send, args=("other",))
            other.start()
            other.join()
            seen.append(client.llen(QUEUE))
        emit_before(signal, *args)

    monkeypatch.setattr(installed, "emit_before", meanwhile)
    watch_actors.send_all([uuid.uuid4() for _ in range(3)])

    assert seen == [1]  # the other thread's message was in Redis before the batch was sent
    assert client.llen(QUEUE) == 4
    client.close()


def _started_after_ms(client: redis.Redis, run_id: str) -> float:
    """Send a scheduled turn; how long until a worker fetched it off the queue (ms)."""
    sent = time.monotonic()
    watch_actors.chat_message.send(run_id)
    deadline = sent + 10
    while client.llen(QUEUE) and time.monotonic() < deadline:
        time.sleep(0.002)
    return (time.monotonic() - sent) * 1000


def test_an_idle_worker_starts_a_due_turn_within_100_ms(settings: Settings) -> None:
    # Given a real worker, idle long enough that a polling consumer would have backed off to
    # Dramatiq's 1 s, and ours blocks on its wake-up (60 s at the latest)
    broker.setup(settings)
    client = redis.Redis.from_url(settings.redis_url)
    with workers.running_worker(settings, processes=1, threads=2) as log:
        assert _started_after_ms(client, str(uuid.uuid4())) < 30_000, log.read_text()[-3000:]
        time.sleep(5)  # its first turn done (a first turn loads what turns need)
        waits = []
        for _ in range(7):
            time.sleep(1.5)
            # When a turn is due
            waits.append(_started_after_ms(client, str(uuid.uuid4())))
    client.close()

    # Then the worker fetched it within 100 ms as a rule (the median), and within 250 ms every
    # time but at most two (room for cross-process scheduling on a loaded machine). Polling once
    # a second would make the median ~500 ms
    assert sorted(waits)[3] < 100 and sorted(waits)[-3] < 250, waits


def test_housekeeping_heartbeats_and_finds_a_message_nobody_announced(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an idle consumer blocking on its wake-up, housekeeping every 0.2 s
    monkeypatch.setattr(wakeup, "HOUSEKEEP_S", 0.2)
    installed = broker.build(settings)
    consumer = installed.consume("housekeeping", prefetch=1, timeout=1000)
    client = redis.Redis.from_url(settings.redis_url)
    got: list[Any] = []

    def take() -> None:
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            message = next(consumer)
            if message is not None:
                got.append(message)

    taker = threading.Thread(target=take)
    taker.start()
    time.sleep(0.5)
    # When a message reaches the queue with no wake-up (as maintenance puts one back)
    message = dramatiq.Message(
        queue_name="housekeeping", actor_name="x", args=(), kwargs={}, options={}
    )
    installed.do_enqueue("housekeeping", "unannounced-1", message.encode())
    taker.join()
    # and nothing fetches for a while
    before = client.zscore("dramatiq:__heartbeats__", installed.broker_id)
    time.sleep(0.6)
    after = client.zscore("dramatiq:__heartbeats__", installed.broker_id)
    client.close()
    consumer.close()

    # Then the consumer got it, and the process kept its heartbeat fresh without fetching
    assert [m.message_id for m in got] == [message.message_id]
    assert before is not None and after is not None and after > before
