"""Jobs: slow verb calls run by a worker; the door waits a little, then hands out a job id."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

from lookout import errors, queue
from lookout.access import credits
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.capabilities import registry
from lookout.db import repo
from lookout.settings import Settings

logger = logging.getLogger(__name__)

# A job's reservation outlives its worst case: time limit x (1 + retries) plus the sweeper's pace.
JOB_HOLD_S = 3600.0
QUEUED_GRACE_S = 120.0
MAX_ATTEMPTS = 3
_POLL_S = (0.05, 0.1, 0.2, 0.25)


async def submit(
    services: Services,
    verb: registry.Verb,
    raw_input: object,
    principal: Principal,
    door: str,
    *,
    call_id: str,
    price: int,
) -> repo.Job:
    """Reserve credits, store the job (visible at once), and enqueue it. The job's request_id
    is the call's ledger key (`call_id`, unique per workspace: jobs_request_key)."""
    await credits.reserve(
        services.db,
        workspace_id=principal.workspace_id,
        request_id=call_id,
        amount=price,
        verb=verb.name,
        actor=principal.actor,
        hold_s=JOB_HOLD_S,
        key_id=principal.key_id,
    )
    try:
        job = await repo.insert_job(
            services.db,
            workspace_id=principal.workspace_id,
            request_id=call_id,
            verb=verb.name,
            input=dict(raw_input) if isinstance(raw_input, dict) else {},
            principal=principal.to_dict(),
            door=door,
            progress_total=0,
            ttl_hours=services.settings.job_ttl_hours,
        )
    except BaseException:
        await credits.refund(services.db, workspace_id=principal.workspace_id, request_id=call_id)
        raise
    await asyncio.to_thread(queue.send, queue.RUN_JOB, str(job.id))
    return job


async def wait(services: Services, job: repo.Job, seconds: float) -> repo.Job:
    """The job once finished, or as it stands after `seconds`."""
    deadline = time.monotonic() + seconds
    for attempt in range(1_000_000):
        if job.finished or time.monotonic() >= deadline:
            return job
        await asyncio.sleep(_POLL_S[min(attempt, len(_POLL_S) - 1)])
        job = await repo.get_job(services.db, job_id=job.id, workspace_id=job.workspace_id) or job
    return job


def view(job: repo.Job) -> dict[str, Any]:
    """What GET /v1/jobs/{id} shows: status, progress and the result envelope once finished."""
    return {
        "id": str(job.id),
        "verb": job.verb,
        "status": job.status,
        "progress": {"done": job.progress_done, "total": job.progress_total},
        "attempts": job.attempts,
        "created_at": job.created_at.isoformat(),
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "expires_at": job.expires_at.isoformat(),
        "result": _result_envelope(job) if job.finished else None,
    }


def _result_envelope(job: repo.Job) -> dict[str, Any]:
    meta = {
        "verb": job.verb,
        "request_id": job.request_id,
        "call_id": job.request_id,
        "credits_charged": job.credits_charged,
        "job_id": str(job.id),
        "duration_ms": _duration_ms(job),
    }
    if job.status == "succeeded":
        return {"ok": True, "data": job.result, "error": None, "meta": meta}
    return {"ok": False, "data": None, "error": job_error(job).to_dict(), "meta": meta}


def _duration_ms(job: repo.Job) -> int | None:
    if job.started_at is None or job.finished_at is None:
        return None
    return int((job.finished_at - job.started_at).total_seconds() * 1000)


def job_error(job: repo.Job) -> errors.LookoutError:
    if job.status == "cancelled":
        return errors.Conflict("This job was cancelled before it finished.", job_id=str(job.id))
    return errors.from_dict(job.error or {})


async def get(services: Services, *, job_id: uuid.UUID, workspace_id: uuid.UUID) -> repo.Job:
    job = await repo.get_job(services.db, job_id=job_id, workspace_id=workspace_id)
    if job is None:
        raise errors.NotFound(
            "No such job in this workspace. Job results are kept for "
            f"{services.settings.job_ttl_hours} hours, then deleted."
        )
    if job.expires_at.timestamp() < time.time():
        raise errors.NotFound(
            f"This job's result expired at {job.expires_at.isoformat()} "
            f"(results are kept for {services.settings.job_ttl_hours} hours)."
        )
    return job


async def cancel(services: Services, *, job_id: uuid.UUID, principal: Principal) -> repo.Job:
    """Cancel a queued job at once, or flag a running one for its worker to stop."""
    principal.require("editor")
    job = await get(services, job_id=job_id, workspace_id=principal.workspace_id)
    status = await repo.request_job_cancel(
        services.db, job_id=job_id, workspace_id=principal.workspace_id
    )
    if status is None:
        raise errors.Conflict(f"This job already {job.status}; there is nothing to cancel.")
    if status == "cancelled":
        await credits.refund(services.db, workspace_id=job.workspace_id, request_id=job.request_id)
    return await get(services, job_id=job_id, workspace_id=principal.workspace_id)


def artifact_url(settings: Settings, job_id: uuid.UUID, artifact_id: uuid.UUID) -> str:
    """Where a job's file is read (with the credentials that read the job)."""
    return f"{settings.public_url.rstrip('/')}/v1/jobs/{job_id}/artifacts/{artifact_id}"


async def get_artifact(
    services: Services, *, job_id: uuid.UUID, artifact_id: uuid.UUID, workspace_id: uuid.UUID
) -> repo.Artifact:
    """A file of this workspace's job, or NotFound (another workspace's, expired, unknown)."""
    found = await repo.get_job_artifact(
        services.db, artifact_id=artifact_id, job_id=job_id, workspace_id=workspace_id
    )
    if found is None:
        raise errors.NotFound(
            "No such file of this job: job files (screenshots) are kept as long as their job "
            "(LOOKOUT_JOB_TTL_HOURS), for the job's workspace only."
        )
    return found
