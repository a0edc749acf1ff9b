"""A message the system posts into a chat outside any turn (a late job result, a paused watch).

Stored like an answer and published as a small turn, so open pages show it live.
"""

from __future__ import annotations

import uuid

from lookout import parts
from lookout.access import jobs
from lookout.access.services import Services
from lookout.agent import answers
from lookout.chat import events
from lookout.db import repo


async def post(
    services: Services,
    *,
    chat_id: uuid.UUID,
    workspace_id: uuid.UUID,
    text: str,
    extra: list[parts.Part] | None = None,
) -> None:
    message_id, turn_id, text_id = uuid.uuid4(), uuid.uuid4(), f"text_{uuid.uuid4().hex[:12]}"
    stream = [
        parts.start(str(message_id), chat_id=str(chat_id), source="automation"),
        *(extra or []),
        parts.text_start(text_id),
        parts.text_delta(text_id, text),
        parts.text_end(text_id),
    ]
    await repo.insert_chat_message(
        services.db, message_id=message_id, chat_id=chat_id, workspace_id=workspace_id,
        role="assistant", source="automation", parts=parts.to_message_parts(stream),
    )  # fmt: skip
    await events.publish_many(services.redis, chat_id, turn_id, [*stream, parts.finish()])


async def post_job_result(services: Services, job_id: uuid.UUID) -> bool:
    """Post a finished job's result to the chat that stopped waiting for it (once)."""
    job = await repo.claim_job_post(services.db, job_id=job_id)
    if job is None or job.chat_id is None:
        return False
    if job.status == "succeeded" and job.result is not None:
        text = answers.of_output(job.verb, job.result, job.input)
    else:
        text = f"The {job.verb} job did not finish: {jobs.job_error(job).message}"
    await post(
        services, chat_id=job.chat_id, workspace_id=job.workspace_id,
        text=f"Job {job.id} is done.\n\n{text}",
    )  # fmt: skip
    return True
