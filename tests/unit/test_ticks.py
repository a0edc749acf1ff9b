"""The periodic ticks: each periodic message once per due minute, a start-up tick, no catch-up,
and a tick that finds Redis down retried, then skipped."""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

import dramatiq
import pytest
import redis

from lookout import periodic, ticks
from lookout.actors import all as actor_modules


class Clock:
    """Wall time that moves only when the ticker waits (or a test jumps it)."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start
        self.waits = 0

    def __call__(self) -> dt.datetime:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.waits += 1
        self.now += dt.timedelta(seconds=seconds)
        return False


def _run_until(start: dt.datetime, end: dt.datetime, **kwargs: Any) -> list[dramatiq.Message[Any]]:
    """The messages a ticker started at `start` sends until the clock passes `end`."""
    sent: list[dramatiq.Message[Any]] = []
    clock = Clock(start)
    ticker = ticks.Ticker(sent.append, clock=clock, **kwargs)

    def wait(seconds: float) -> bool:
        clock.wait(seconds)
        return clock.now > end

    ticker.wait = wait
    ticker.run()
    return sent


def test_each_periodic_message_is_sent_once_per_due_minute() -> None:
    # Given a scheduler started at 10:16:30 UTC, left running until 11:20:10
    start = dt.datetime(2026, 12, 2, 10, 16, 30, tzinfo=dt.UTC)
    sent = _run_until(start, dt.datetime(2026, 12, 2, 11, 20, 10, tzinfo=dt.UTC))

    # Then every-minute actors got one message a minute (10:16 at start-up to 11:20), the
    # ten-minute one at 10:20, 10:30, ... 11:20, and the hourly one at 10:17 and 11:17
    per_actor: dict[str, list[str]] = collections.defaultdict(list)
    for message in sent:
        per_actor[message.actor_name].append(message.options["scheduled_at"])
    minutes = 65  # 10:16 .. 11:20
    for entry in (periodic.DISPATCH_DUE_WATCHES, periodic.RECOVER_JOBS,
                  periodic.RECOVER_DELIVERIES, periodic.PRUNE_CHECKPOINTS):  # fmt: skip
        stamps = per_actor[entry.actor_name]
        assert len(stamps) == len(set(stamps)) == minutes, stamps
        assert stamps[0] == "2026-12-02T10:16:30+00:00"  # the start-up tick, stamped now
        assert stamps[1] == "2026-12-02T10:17:00+00:00"
    assert [s[11:16] for s in per_actor["sweep_expired"]] == [
        "10:20", "10:30", "10:40", "10:50", "11:00", "11:10", "11:20"
    ]  # fmt: skip
    assert [s[11:16] for s in per_actor["prune_history"]] == ["10:17", "11:17"]
    assert {m.queue_name for m in sent} == {"dispatch"}
    assert all(m.args == () and m.kwargs == {} for m in sent)


def test_started_late_in_a_minute_the_first_tick_is_the_next_minute() -> None:
    start = dt.datetime(2026, 12, 2, 10, 16, 57, tzinfo=dt.UTC)
    sent = _run_until(start, dt.datetime(2026, 12, 2, 10, 17, 30, tzinfo=dt.UTC))
    stamps = {m.options["scheduled_at"] for m in sent}
    assert stamps == {"2026-12-02T10:17:00+00:00"}, stamps


def test_missed_minutes_are_not_caught_up_and_a_clock_stepping_back_sends_nothing_twice() -> None:
    sent: list[dramatiq.Message[Any]] = []
    clock = Clock(dt.datetime(2026, 12, 2, 10, 0, 5, tzinfo=dt.UTC))
    jumps = iter([dt.timedelta(minutes=5), dt.timedelta(seconds=-50), dt.timedelta(seconds=0)])
    ticker = ticks.Ticker(sent.append, entries=[periodic.DISPATCH_DUE_WATCHES], clock=clock)

    def wait(seconds: float) -> bool:
        jump = next(jumps, None)
        if jump is None:
            return True
        clock.now += jump  # a suspended machine, then a clock set back
        return False

    ticker.wait = wait
    ticker.run()

    stamps = [m.options["scheduled_at"][11:19] for m in sent]
    assert stamps == ["10:00:05", "10:05:05"], stamps


def test_the_table_is_what_the_actors_declare() -> None:
    # The scheduler sends from the table; the workers run the actors: the two must agree.
    declared = {
        (actor.actor_name, actor.queue_name, str(actor.options["periodic"]))
        for module in actor_modules.MODULES
        for actor in vars(module).values()
        if isinstance(actor, dramatiq.Actor) and "periodic" in actor.options
    }
    assert declared == {(e.actor_name, e.queue_name, e.cron) for e in periodic.ALL}


class Flaky:
    """A broker whose first `failures` enqueues of an actor find Redis down."""

    def __init__(self, failures: dict[str, int]) -> None:
        self.failures, self.tries = failures, collections.Counter[str]()
        self.sent: list[str] = []

    def enqueue(self, message: dramatiq.Message[Any]) -> None:
        self.tries[message.actor_name] += 1
        if self.tries[message.actor_name] <= self.failures.get(message.actor_name, 0):
            raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")
        self.sent.append(message.actor_name)


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ticks, "RETRY_EVERY_S", 0.01)


AT = dt.datetime(2026, 12, 2, 10, 1, tzinfo=dt.UTC)


def test_a_tick_is_sent_once_redis_is_back() -> None:
    broker = Flaky({"dispatch_due_watches": 3})
    ticks.Ticker(broker.enqueue, entries=[periodic.DISPATCH_DUE_WATCHES]).tick(AT)
    assert (broker.tries["dispatch_due_watches"], broker.sent) == (4, ["dispatch_due_watches"])


def test_a_tick_redis_never_takes_is_skipped_and_the_others_still_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ticks, "SEND_RETRY_S", 0.05)
    broker = Flaky({"recover_jobs": 10_000})
    entries = [periodic.RECOVER_JOBS, periodic.DISPATCH_DUE_WATCHES]
    ticks.Ticker(broker.enqueue, entries=entries).tick(AT)
    assert "recover_jobs" not in broker.sent and 1 < broker.tries["recover_jobs"] < 10
    assert broker.sent == ["dispatch_due_watches"]
