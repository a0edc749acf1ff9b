"""Notifications of a watch with a condition: sent when the run's verdict says so (edge-triggered
in agent.conditions), never for a change the condition does not care about. The run keeps what
it read (`condition_met`, `value`) either way."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from typing import Any

from lookout import queue
from lookout.access.services import Services
from lookout.db import repo
from lookout.notify import deliveries, message, prefs

logger = logging.getLogger(__name__)

EVENT = "watch.condition"
MAX_VALUE_ITEMS = 20


def verdict_of(emitted: list[Any]) -> dict[str, Any] | None:
    """The `data-condition` part's data of a turn, or None (a watch without a condition)."""
    found = [part for part in emitted if part.get("type") == "data-condition"]
    return dict(found[-1]["data"]) if found else None


def became_met(verdict: dict[str, Any]) -> bool:
    """Whether this run is the one where the condition became true: met, and notified for it
    (edge-triggered in agent.conditions; a subject no longer found notifies but is not met)."""
    return verdict.get("met") is True and bool(verdict.get("notify"))


def stored_value(value: Any) -> Any:
    """What the run record keeps of the value read: a number, a yes/no, a short list."""
    if isinstance(value, list):
        return [str(item)[:200] for item in value[:MAX_VALUE_ITEMS]]
    return value if isinstance(value, int | float | bool | str) or value is None else str(value)


async def after_run(
    services: Services,
    automation: repo.Automation,
    run_id: uuid.UUID,
    verdict: dict[str, Any],
    succeeded: bool,
) -> None:
    """Record the verdict on the run; notify when it says so. Never raises."""
    try:
        await repo.set_run_condition(
            services.db,
            run_id=run_id,
            condition_met=verdict.get("met"),
            value=stored_value(verdict.get("value")),
            became_met=succeeded and became_met(verdict),
        )
        if succeeded and verdict.get("notify"):
            delivery_ids = await prepare(services, automation, run_id, verdict)
            if delivery_ids:
                await asyncio.to_thread(_enqueue, delivery_ids)
    except Exception:
        logger.exception("could not record or notify the condition of run %s", run_id)


def _enqueue(delivery_ids: list[uuid.UUID]) -> None:
    for delivery_id in delivery_ids:
        queue.send(queue.DELIVER, str(delivery_id))


def payload(
    automation: repo.Automation, run_id: uuid.UUID, verdict: dict[str, Any], chat_url: str | None
) -> dict[str, Any]:
    """The webhook body of a `watch.condition` event."""
    return {
        "event": EVENT,
        "watch_id": str(automation.id),
        "chat_id": str(automation.chat_id),
        "run_id": str(run_id),
        "occurred_at": dt.datetime.now(dt.UTC).isoformat(),
        "summary": str(verdict.get("sentence") or "")[:500],
        "chat_url": chat_url,
        "condition": verdict.get("condition"),
        "met": verdict.get("met"),
        "value": stored_value(verdict.get("value")),
        "previous": stored_value(verdict.get("previous")),
        "url": verdict.get("url"),
        "title": str(verdict.get("title") or "")[:300],
        "changes": [],
    }


async def prepare(
    services: Services, automation: repo.Automation, run_id: uuid.UUID, verdict: dict[str, Any]
) -> list[uuid.UUID]:
    """The deliveries of this verdict, one per target (or a note saying why none)."""
    wanted = prefs.WatchNotify.of(automation.notify)
    if not wanted.enabled:
        return []
    found = await repo.notification_targets_for_watch(
        services.db,
        workspace_id=automation.workspace_id,
        target_ids=None if wanted.targets is None else list(wanted.targets),
    )
    if not found:
        await repo.insert_delivery_note(
            services.db,
            workspace_id=automation.workspace_id,
            automation_id=automation.id,
            run_id=run_id,
            status="skipped",
            note=deliveries.NO_TARGET,
        )
        return []
    chat_url = message.chat_link(services.settings.public_url, automation.chat_id)
    data = payload(automation, run_id, verdict, chat_url)
    created = []
    for target in found:
        delivery_id = await repo.insert_delivery(
            services.db,
            workspace_id=automation.workspace_id,
            automation_id=automation.id,
            run_id=run_id,
            target_id=target.id,
            target_name=target.name,
            payload=data,
        )
        if delivery_id is not None:
            created.append(delivery_id)
    return created
