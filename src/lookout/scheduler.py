"""Loaded into periodiq by `lookout scheduler`: a tick outlives a Redis restart.

periodiq 0.14 sends each tick with no error handling, so one tick that found Redis down (a
restart at the minute boundary) ended the scheduler for good, and with it every dispatch
(tests/reliability/test_faults_redis.py). Here each periodic actor's tick is retried while Redis
is away, then skipped with a warning: the dispatcher is idempotent and the next tick catches up.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import periodiq
import redis

logger = logging.getLogger(__name__)

SEND_RETRY_S = 20.0  # well inside the minute between two ticks
RETRY_EVERY_S = 1.0

_send_actors = periodiq.Scheduler.send_actors


def send_actors(scheduler: Any, actors: list[Any], now: Any) -> None:
    """periodiq's send_actors, one actor at a time, retried while Redis cannot be reached."""
    for actor in actors:
        deadline = time.monotonic() + SEND_RETRY_S
        while True:
            try:
                _send_actors(scheduler, [actor], now)
                break
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if time.monotonic() + RETRY_EVERY_S > deadline:
                    logger.warning("tick of %s skipped: %s", actor.actor_name, exc)
                    break
                time.sleep(RETRY_EVERY_S)


periodiq.Scheduler.send_actors = send_actors
