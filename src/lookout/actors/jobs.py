"""Job actors: run a slow verb call; every minute, recover lost jobs and stale reservations."""

from __future__ import annotations

import logging
import uuid

import dramatiq

from lookout import periodic
from lookout.access import credits, job_runner
from lookout.actors import runtime, ticked
from lookout.chat import notices

logger = logging.getLogger(__name__)

JOB_TIME_LIMIT_MS = 10 * 60 * 1000


@dramatiq.actor(queue_name="jobs", max_retries=2, time_limit=JOB_TIME_LIMIT_MS, min_backoff=1000)
async def run_job(job_id: str) -> None:
    """Run one job; idempotent (the claim is a compare-and-set on the job row)."""
    services = runtime.current().services
    await job_runner.execute(services, uuid.UUID(job_id))
    await notices.post_job_result(services, uuid.UUID(job_id))


@dramatiq.actor(max_retries=0, time_limit=60_000, **ticked.options(periodic.RECOVER_JOBS))
async def recover_jobs() -> None:
    """Re-enqueue jobs a dead worker left behind; refund reservations nothing closed."""
    state = runtime.current()
    for job_id in await job_runner.recover_lost(state.services):
        run_job.send(str(job_id))
    await credits.release_stale(state.db, state.stale_sweep)
