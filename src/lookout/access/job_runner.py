"""The worker side of jobs: run one claimed job, and recover jobs whose worker died."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from lookout import errors, heartbeat
from lookout.access import credits, jobs, metering, principals
from lookout.access.services import Services
from lookout.capabilities import registry
from lookout.db import repo
from lookout.ops import instrument

logger = logging.getLogger(__name__)

LEASE_S = 60.0
_PROGRESS_EVERY_S = 0.5


@instrument.job
async def execute(services: Services, job_id: uuid.UUID) -> None:
    """Claim and run a job once; a redelivered message for a finished or live job does nothing.
    A job cut off by shutdown is released back to the queue."""
    try:
        await _execute(services, job_id)
    except asyncio.CancelledError:
        await asyncio.shield(repo.release_job(services.db, job_id=job_id))
        logger.warning("job cut off by shutdown: back in the queue")
        raise


async def _execute(services: Services, job_id: uuid.UUID) -> None:
    job = await repo.claim_job(services.db, job_id=job_id, lease_s=LEASE_S)
    if job is None:
        await _close_if_cancelled(services, job_id)
        return

    async def renew() -> None:
        await repo.extend_job_lease(services.db, job_id=job_id, lease_s=LEASE_S)

    meter = await _meter(services, job)
    async with heartbeat.beating(LEASE_S / 3, renew):
        status, result, error = await _run(services, job, meter)
    charged = 0
    if status == "succeeded" and result is not None:
        verb = registry.get(job.verb)
        charged = await meter.settle(verb.billable_units(result) * verb.price)
        instrument.job_charged(job.verb, job.door, charged)
    else:
        await meter.refund()
    await repo.finish_job(
        services.db, job_id=job_id, status=status, result=result, error=error,
        credits_charged=charged,
    )  # fmt: skip


async def _meter(services: Services, job: repo.Job) -> metering.Meter:
    """The job's credits: what submit reserved (its base price, plus the pages the web process
    found to need rendering: spare), and its top-ups, keyed by this attempt."""
    verb = registry.get(job.verb)
    base = verb.max_units(registry.validate_input(verb, job.input)) * verb.price
    reserved = await repo.get_reserved(
        services.db, workspace_id=job.workspace_id, request_id=job.request_id
    )
    reserved = base if reserved is None else reserved
    principal = principals.Principal.from_dict(job.principal)
    return metering.Meter(
        services.db, job.workspace_id, job.request_id, verb.name, verb.price, principal.actor,
        jobs.JOB_HOLD_S, reserved=reserved, spare=max(0, reserved - base),
        key_id=principal.key_id, attempt=job.attempts,
    )  # fmt: skip


async def _run(
    services: Services, job: repo.Job, meter: metering.Meter
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """(status, result, error) of executing the job's verb; never raises for a verb failure."""
    last = [0.0]

    async def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] >= _PROGRESS_EVERY_S or done >= total:
            last[0] = time.monotonic()
            await repo.job_progress(
                services.db, job_id=job.id, done=done, total=total, lease_s=LEASE_S
            )

    async def cancelled() -> bool:
        return await repo.job_cancel_requested(services.db, job_id=job.id)

    context = registry.VerbContext(
        http=services.http,
        settings=services.settings,
        progress=progress,
        cancelled=cancelled,
        redis=services.redis,
        browser=services.browser,
        save_artifact=_artifact_saver(services, job),
        top_up=meter.top_up,
    )
    try:
        verb = registry.get(job.verb)
        data = registry.validate_input(verb, job.input)
        result = registry.dump_output(verb, await verb.execute(data, context))
    except errors.Unavailable:
        raise  # infrastructure: let Dramatiq retry the message
    except errors.LookoutError as exc:
        return "failed", None, exc.to_dict()
    except Exception:
        logger.exception("job failed unexpectedly", extra={"job_id": str(job.id)})
        return "failed", None, errors.LookoutError("The job failed on our side.").to_dict()
    if await cancelled():
        return "cancelled", None, None
    return "succeeded", result, None


def _artifact_saver(
    services: Services, job: repo.Job
) -> Callable[[str, bytes], Awaitable[dict[str, Any]]]:
    async def save(content_type: str, body: bytes) -> dict[str, Any]:
        saved = await repo.insert_job_artifact(
            services.db, job_id=job.id, content_type=content_type, body=body
        )
        if saved is None:
            raise errors.NotFound("The job was deleted while it ran.")
        return {"url": jobs.artifact_url(services.settings, job.id, saved.id),
                "expires_at": saved.expires_at}  # fmt: skip

    return save


async def _close_if_cancelled(services: Services, job_id: uuid.UUID) -> None:
    if await repo.cancel_flagged_job(services.db, job_id=job_id):
        job = await repo.get_job_for_worker(services.db, job_id=job_id)
        if job is not None:
            await credits.refund(
                services.db, workspace_id=job.workspace_id, request_id=job.request_id
            )


async def recover_lost(services: Services) -> list[uuid.UUID]:
    """Requeue jobs a dead worker left (up to MAX_ATTEMPTS runs), fail the rest; the requeued."""
    requeue: list[uuid.UUID] = []
    for lost in await repo.list_lost_jobs(services.db, queued_grace_s=jobs.QUEUED_GRACE_S):
        if lost.status == "queued":
            requeue.append(lost.id)
        elif lost.attempts < jobs.MAX_ATTEMPTS:
            if await repo.requeue_job(services.db, job_id=lost.id):
                requeue.append(lost.id)
        elif await repo.fail_lost_job(services.db, job_id=lost.id, error=_lost_error(lost)):
            await credits.refund(
                services.db, workspace_id=lost.workspace_id, request_id=lost.request_id
            )
    return requeue


def _lost_error(lost: repo.LostJob) -> dict[str, Any]:
    return errors.Unavailable(
        f"The worker running this job stopped {lost.attempts} times; the job was abandoned "
        "and its credits refunded."
    ).to_dict()
