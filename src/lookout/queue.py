"""The queue: our actors' names, and sending to them through the broker's actor lookup.

Services enqueue by name here and never import `lookout.actors` (a door): the actor a name
stands for is the one `lookout.broker.setup()` declared on the process's broker. Sending is a
blocking Redis call; from the event loop run it in a thread (`asyncio.to_thread`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import dramatiq

# The actors services send to (declared in lookout.actors.jobs / .watches / .notify).
RUN_JOB = "run_job"
CHAT_MESSAGE = "chat_message"
DELIVER = "deliver"


def send(actor_name: str, *args: Any, delay_ms: int | None = None) -> None:
    """Enqueue one message to the named actor (after `delay_ms`, if given)."""
    actor = dramatiq.get_broker().get_actor(actor_name)
    actor.send_with_options(args=args, delay=delay_ms)


def send_many(actor_name: str, args_list: Iterable[Sequence[Any]]) -> None:
    """Enqueue a message for each argument tuple, many a round trip where the broker can
    (lookout.redis_broker.Broker.enqueue_many), else one `enqueue` each."""
    broker = dramatiq.get_broker()
    actor = broker.get_actor(actor_name)
    messages = [actor.message(*args) for args in args_list]
    enqueue_many = getattr(broker, "enqueue_many", None)
    if enqueue_many is not None:
        enqueue_many(messages)
        return
    for message in messages:
        broker.enqueue(message)
