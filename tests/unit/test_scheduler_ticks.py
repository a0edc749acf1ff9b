"""`lookout scheduler` survives a tick that finds Redis down (periodiq alone would exit)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import periodiq
import pytest
import redis

from lookout import scheduler


class Actor:
    """A periodic actor whose first `failures` sends find Redis down."""

    def __init__(self, name: str, failures: int) -> None:
        self.actor_name, self.failures, self.sent, self.tries = name, failures, 0, 0

    def send_with_options(self, **options: Any) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise redis.ConnectionError(
                "Error 111 connecting to 127.0.0.1:6379. Connection refused."
            )
        self.sent += 1


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler, "RETRY_EVERY_S", 0.01)


def test_a_tick_is_sent_once_redis_is_back() -> None:
    dispatch = Actor("dispatch_due_watches", failures=3)

    periodiq.Scheduler([dispatch]).send_actors([dispatch], dt.datetime.now(dt.UTC))

    assert (dispatch.tries, dispatch.sent) == (4, 1)


def test_a_tick_redis_never_takes_is_skipped_and_the_others_still_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scheduler, "SEND_RETRY_S", 0.05)
    lost, other = Actor("recover_jobs", failures=10_000), Actor("dispatch_due_watches", 0)

    periodiq.Scheduler([lost, other]).send_actors([lost, other], dt.datetime.now(dt.UTC))

    assert lost.sent == 0 and 1 < lost.tries < 10
    assert other.sent == 1
