"""Watch actors: the every-minute dispatcher, the scheduled chat turn, the run sweeper."""

from __future__ import annotations

import uuid

import dramatiq

from lookout import periodic, queue
from lookout.actors import runtime, ticked
from lookout.watches import dispatch, runner

TURN_TIME_LIMIT_MS = 15 * 60 * 1000
# Older than this, a message is dropped (its run is failed by the sweeper): no stale catch-up.
TURN_MAX_AGE_MS = 30 * 60 * 1000


@dramatiq.actor(
    queue_name="watches", max_retries=1, min_backoff=5_000, time_limit=TURN_TIME_LIMIT_MS,
    max_age=TURN_MAX_AGE_MS,
)  # fmt: skip
async def chat_message(run_id: str) -> None:
    """Run one scheduled (or manual) turn of a watch; a duplicate delivery does nothing."""
    state = runtime.current()
    await runner.execute(state.services, await state.agent.graph(), uuid.UUID(run_id))


@dramatiq.actor(max_retries=0, time_limit=55_000, **ticked.options(periodic.DISPATCH_DUE_WATCHES))
async def dispatch_due_watches() -> None:
    """Every minute: record a run per due watch and enqueue it."""
    # Sending is a blocking Redis call: dispatch runs it off the event loop turns share.
    await dispatch.dispatch(runtime.current().db, send_all)


def send_all(run_ids: list[uuid.UUID]) -> None:
    """Enqueue a scheduled turn a run, many a round trip (redis_broker.Broker.enqueue_many)."""
    queue.send_many(queue.CHAT_MESSAGE, [(str(run_id),) for run_id in run_ids])
