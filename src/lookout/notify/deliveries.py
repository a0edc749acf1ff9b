"""Deliveries: a finished run's change handed to its watch's targets, one row per target, each
tried at most MAX_TRIES times with backoff, every outcome kept for the run history."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from typing import Any

import asyncpg

from lookout import errors, queue
from lookout.access.services import Services
from lookout.agent import report
from lookout.db import repo
from lookout.notify import message, prefs, targets, versions

logger = logging.getLogger(__name__)

MAX_TRIES = 3
LEASE_S = 60.0
NO_TARGET = "Not sent: this workspace has no default notification target (add one, or choose one)."


async def after_run(
    services: Services, automation: repo.Automation, run_id: uuid.UUID, emitted: list[Any]
) -> None:
    """Notify about a succeeded run's changes; never raises: a watch outlives its notifications."""
    try:
        delivery_ids = await prepare(services, automation, run_id, emitted)
        if delivery_ids:
            await asyncio.to_thread(_enqueue, delivery_ids)
    except Exception:
        logger.exception("could not hand run %s to its notification targets", run_id)


def _enqueue(delivery_ids: list[uuid.UUID]) -> None:
    for delivery_id in delivery_ids:
        queue.send(queue.DELIVER, str(delivery_id))


async def prepare(
    services: Services, automation: repo.Automation, run_id: uuid.UUID, emitted: list[Any]
) -> list[uuid.UUID]:
    """Record what this run sends (or why not); returns the deliveries to send."""
    changes = message.changes_of(emitted)
    if not changes:
        return []  # the baseline run, or no change
    wanted = prefs.WatchNotify.of(automation.notify)
    changes = await versions.reportable(
        services.db, automation.id, changes, wanted.compared_versions
    )
    if not wanted.enabled:
        return []
    if not changes:
        note = (
            f"Not sent: the page went back to one of its last {wanted.compared_versions} "
            "versions (flap suppression)."
        )
        await _note(services.db, automation, run_id, "suppressed", note)
        return []
    found = await repo.notification_targets_for_watch(
        services.db,
        workspace_id=automation.workspace_id,
        target_ids=None if wanted.targets is None else list(wanted.targets),
    )
    if not found:
        await _note(services.db, automation, run_id, "skipped", NO_TARGET)
        return []
    data = message.payload(
        watch_id=automation.id, chat_id=automation.chat_id, run_id=run_id, changes=changes,
        chat_url=message.chat_link(services.settings.public_url, automation.chat_id),
        occurred_at=dt.datetime.now(dt.UTC).isoformat(), diff=report.run_data(emitted),
    )  # fmt: skip
    created = []
    for target in found:
        delivery_id = await repo.insert_delivery(
            services.db, workspace_id=automation.workspace_id, automation_id=automation.id,
            run_id=run_id, target_id=target.id, target_name=target.name, payload=data,
        )  # fmt: skip
        if delivery_id is not None:  # None: this run already handed it over
            created.append(delivery_id)
    return created


async def _note(
    db: asyncpg.Pool, automation: repo.Automation, run_id: uuid.UUID, status: str, note: str
) -> None:
    await repo.insert_delivery_note(
        db, workspace_id=automation.workspace_id, automation_id=automation.id, run_id=run_id,
        status=status, note=note,
    )  # fmt: skip


async def attempt(services: Services, delivery_id: uuid.UUID) -> float | None:
    """Try one delivery once; returns the seconds to wait before the next try, or None when it
    is done (sent, failed for good, or not ours to send: a duplicate message does nothing)."""
    delivery = await repo.claim_delivery(services.db, delivery_id=delivery_id, lease_s=LEASE_S)
    if delivery is None:
        return None
    if delivery.attempts > MAX_TRIES:  # a worker died during the last try
        await _finish(services.db, delivery, "failed", delivery.last_error or "Gave up.")
        return None
    target = None
    if delivery.target_id is not None:
        target = await repo.get_notification_target(
            services.db, target_id=delivery.target_id, workspace_id=delivery.workspace_id
        )
    if target is None:
        await _finish(services.db, delivery, "failed", "The notification target was deleted.")
        return None
    try:
        await targets.send(services, target, delivery.payload, delivery_id=str(delivery.id))
    except errors.LookoutError as exc:
        return await _failed(services, delivery, exc.message)
    await _finish(services.db, delivery, "sent", None)
    return None


async def _failed(services: Services, delivery: repo.Delivery, error: str) -> float | None:
    if delivery.attempts >= MAX_TRIES:
        logger.warning(
            "notification %s to target %s failed after %d tries",
            delivery.id, delivery.target_id, delivery.attempts,
        )  # fmt: skip
        await _finish(services.db, delivery, "failed", error)
        return None
    delay = float(services.settings.notify_retry_s * 2 ** (delivery.attempts - 1))
    await repo.retry_delivery(services.db, delivery_id=delivery.id, error=error, delay_s=delay)
    return delay


async def _finish(
    db: asyncpg.Pool, delivery: repo.Delivery, status: str, error: str | None
) -> None:
    await repo.finish_delivery(db, delivery_id=delivery.id, status=status, error=error)


async def lost(db: asyncpg.Pool) -> list[uuid.UUID]:
    """Deliveries whose message was lost (or whose worker died), to send again."""
    return await repo.list_lost_deliveries(db)


async def history(
    db: asyncpg.Pool, workspace_id: uuid.UUID, run_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[dict[str, Any]]]:
    """The deliveries of each run, as the run history shows them."""
    by_run: dict[uuid.UUID, list[dict[str, Any]]] = {run_id: [] for run_id in run_ids}
    for delivery in await repo.list_run_deliveries(db, run_ids=run_ids, workspace_id=workspace_id):
        by_run.setdefault(delivery.run_id, []).append(view(delivery))
    return by_run


def view(delivery: repo.Delivery) -> dict[str, Any]:
    def iso(value: dt.datetime | None) -> str | None:
        return value.isoformat() if value else None

    return {
        "id": str(delivery.id), "target_id": str(delivery.target_id or "") or None,
        "target": delivery.target_name or None, "status": delivery.status,
        "attempts": delivery.attempts, "last_error": delivery.last_error, "note": delivery.note,
        "created_at": iso(delivery.created_at), "finished_at": iso(delivery.finished_at),
    }  # fmt: skip
