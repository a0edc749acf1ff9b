"""Notification actors: send one delivery (retries are scheduled here, counted on the row), and
every minute, send again the deliveries whose message was lost."""

from __future__ import annotations

import asyncio
import uuid

import dramatiq

from lookout import periodic, queue
from lookout.actors import runtime, ticked
from lookout.notify import deliveries

# One try: a webhook answers within 10 s, an Apprise call is abandoned after 30 s.
DELIVER_TIME_LIMIT_MS = 60_000


# max_retries=0: Dramatiq's own retries would not be counted on the delivery; a failed try
# schedules the next one itself (with backoff), up to deliveries.MAX_TRIES.
@dramatiq.actor(queue_name="notify", max_retries=0, time_limit=DELIVER_TIME_LIMIT_MS)
async def deliver(delivery_id: str) -> None:
    """Try one delivery; idempotent (the claim is a compare-and-set on the delivery row)."""
    delay_s = await deliveries.attempt(runtime.current().services, uuid.UUID(delivery_id))
    if delay_s is not None:
        # Sending is a blocking Redis call: off the event loop that turns share.
        await asyncio.to_thread(
            deliver.send_with_options, args=(delivery_id,), delay=int(delay_s * 1000)
        )


@dramatiq.actor(max_retries=0, time_limit=55_000, **ticked.options(periodic.RECOVER_DELIVERIES))
async def recover_deliveries() -> None:
    """Every minute: send again the deliveries a lost message or a dead worker left behind."""
    await asyncio.to_thread(send_all, await deliveries.lost(runtime.current().db))


def send_all(delivery_ids: list[uuid.UUID]) -> None:
    for delivery_id in delivery_ids:
        queue.send(queue.DELIVER, str(delivery_id))
