"""Jobs and usage over REST: GET/DELETE /v1/jobs/{id}, a job's files, GET /v1/usage."""

from __future__ import annotations

import uuid

from aiohttp import web

from lookout import appkeys, errors
from lookout.access import credits, jobs
from lookout.routes import authn, common


def _job_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["job_id"])
    except ValueError:
        raise errors.NotFound("No such job: job ids look like 3f0c…-… (a UUID).") from None


async def get_job(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    job = await jobs.get(
        appkeys.services(request.app), job_id=_job_id(request), workspace_id=principal.workspace_id
    )
    return common.ok(request, jobs.view(job), verb=job.verb, job_id=str(job.id))


async def cancel_job(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    job = await jobs.cancel(
        appkeys.services(request.app), job_id=_job_id(request), principal=principal
    )
    return common.ok(request, jobs.view(job), verb=job.verb, job_id=str(job.id))


async def get_artifact(request: web.Request) -> web.Response:
    """A job's file (a screenshot), for the job's own workspace."""
    principal = await authn.authenticate(request)
    try:
        artifact_id = uuid.UUID(request.match_info["artifact_id"])
    except ValueError:
        raise errors.NotFound("No such file: file ids are UUIDs.") from None
    found = await jobs.get_artifact(
        appkeys.services(request.app), job_id=_job_id(request), artifact_id=artifact_id,
        workspace_id=principal.workspace_id,
    )  # fmt: skip
    return web.Response(
        body=found.body,
        content_type=found.content_type,
        headers={"Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )


async def usage(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    return common.ok(request, await credits.usage(services.db, workspace_id=principal.workspace_id))
