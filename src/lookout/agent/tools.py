"""Verb calls from a chat turn: through the one adapter, with tool parts and job progress."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from typing import Any

from lookout import errors, parts
from lookout.access import invoke, jobs
from lookout.agent.context import TurnContext
from lookout.capabilities import registry
from lookout.db import repo

JOB_POLL_S = 1.5


@dataclasses.dataclass(frozen=True)
class Call:
    """The outcome of one verb call: output, or the error a person should read."""

    verb: str
    input: dict[str, Any]
    output: dict[str, Any] | None = None
    error: errors.LookoutError | None = None
    job_id: str | None = None


def tool_name(verb: str) -> str:
    return registry.get(verb).tool_name if verb in registry.REGISTRY else verb.replace(".", "_")


async def ask(ctx: TurnContext, asked: registry.Ask) -> Call:
    """Run the verb that serves `asked`, its input filled by the verb."""
    verb, arguments = registry.asked(asked)
    return await call(ctx, verb.name, arguments)


async def call(ctx: TurnContext, verb: str, arguments: dict[str, Any]) -> Call:
    """Run `verb` for the turn's principal; never raises for a verb failure."""
    call_id = f"call_{uuid.uuid4().hex[:16]}"
    await ctx.emit(parts.tool_input(call_id, tool_name(verb), arguments))
    try:
        outcome = await invoke.invoke(
            ctx.services,
            verb,
            arguments,
            ctx.principal,
            "chat",
            request_id=f"{ctx.turn_id}:{call_id}",
            settlements=ctx.settlements,
        )
        result = await _finish_job(ctx, verb, arguments, outcome)
    except errors.LookoutError as exc:
        result = Call(verb, arguments, error=exc)
    shown = result.output if result.error is None else {"error": result.error.to_dict()}
    await ctx.emit(parts.tool_output(call_id, shown))
    return result


async def _finish_job(
    ctx: TurnContext, verb: str, arguments: dict[str, Any], outcome: invoke.Outcome
) -> Call:
    """Inline outcomes as they are; a job is polled, with progress, up to the deadline."""
    if outcome.status != 202 or outcome.job_id is None:
        return Call(verb, arguments, output=outcome.data, job_id=outcome.job_id)
    job_id = uuid.UUID(outcome.job_id)
    await repo.set_job_chat(ctx.services.db, job_id=job_id, chat_id=ctx.chat_id)
    deadline = time.monotonic() + ctx.job_deadline_s
    while True:
        job = await repo.get_job(
            ctx.services.db, job_id=job_id, workspace_id=ctx.principal.workspace_id
        )
        if job is None:  # expired or deleted meanwhile
            return Call(
                verb, arguments, error=errors.NotFound("The job is gone."), job_id=str(job_id)
            )
        progress = {"done": job.progress_done, "total": job.progress_total}
        await ctx.emit(
            parts.data("job", {"job_id": str(job_id), "status": job.status, "progress": progress})
        )
        if job.finished:
            if job.status == "succeeded":
                return Call(verb, arguments, output=job.result, job_id=str(job_id))
            return Call(verb, arguments, error=jobs.job_error(job), job_id=str(job_id))
        if time.monotonic() >= deadline and await repo.hand_job_to_chat(
            ctx.services.db, job_id=job_id
        ):
            # Still running: the worker posts the result to this chat when the job ends.
            return Call(verb, arguments, job_id=str(job_id))
        await asyncio.sleep(0 if time.monotonic() >= deadline else JOB_POLL_S)
