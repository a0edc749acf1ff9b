"""Jobs and usage over REST: GET/DELETE /v1/jobs/{id}, GET /v1/usage."""

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


async def usage(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    return common.ok(request, await credits.usage(services.db, workspace_id=principal.workspace_id))
