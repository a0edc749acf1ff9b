"""Decorators for the four units of work: a verb call, a chat turn, a watch run, a job.

Each binds the unit's ids to the log context, records its metrics, and says what happens when
shutdown cuts it off (cancellation): a web turn is answered "interrupted", a run or a job goes
back to the queue. One decorator line at each definition keeps the services free of this.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from lookout import errors, logs, parts
from lookout.capabilities import registry
from lookout.chat import events
from lookout.db import repo
from lookout.ops import metrics

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
INTERRUPTED = "I was interrupted before I could finish (the service restarted). Please ask again."


def _arguments(fn: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """The arguments of a call by parameter name (defaults left out), without Signature.bind's
    cost on every call: `fn` is ours and called correctly (a wrong call fails inside it)."""
    names = tuple(inspect.signature(fn).parameters)

    def arguments(*args: Any, **kwargs: Any) -> dict[str, Any]:
        given = dict(zip(names, args, strict=False))
        given.update(kwargs)
        return given

    return arguments


def verb_call(fn: F) -> F:
    """For `invoke`: calls by verb, door and outcome; credits charged inline (jobs settle later)."""
    arguments = _arguments(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = arguments(*args, **kwargs)
        verb, door = _verb_label(given["verb_name"]), str(given["door"])
        started, outcome = time.monotonic(), "internal"
        try:
            result = await fn(*args, **kwargs)
            outcome = "queued" if result.status == 202 else "ok"
            if result.job_id is None and result.credits_charged:
                metrics.CREDITS.labels(verb, door).inc(result.credits_charged)
            return result
        except errors.LookoutError as exc:
            outcome = exc.code
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            metrics.VERB_CALLS.labels(verb, door, outcome).inc()
            metrics.VERB_DURATION.labels(verb, door).observe(time.monotonic() - started)

    return cast(F, wrapper)


def _verb_label(name: object) -> str:
    return str(name) if name in registry.REGISTRY else "unknown"  # from callers: bound labels


def chat_turn(fn: F) -> F:
    """For `turns.execute`: ids on every line, turns by source and outcome, duration."""
    arguments = _arguments(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = arguments(*args, **kwargs)
        turn, services = given["turn"], given["services"]
        chat = turn.chat
        with logs.bound(turn_id=turn.id, chat_id=chat.id, workspace_id=chat.workspace_id,
                        run_id=turn.run_id):  # fmt: skip
            started, outcome = time.monotonic(), "failed"
            try:
                emitted = await fn(*args, **kwargs)
                outcome = "failed" if any(p["type"] == "error" for p in emitted) else "succeeded"
                return emitted
            except asyncio.CancelledError:
                outcome = "interrupted"
                await asyncio.shield(_interrupted(services, turn))
                raise
            finally:
                elapsed = time.monotonic() - started
                metrics.TURNS.labels(turn.source, outcome).inc()
                metrics.TURN_DURATION.labels(turn.source).observe(elapsed)
                logger.info("turn %s (%s) in %.2f s", outcome, turn.source, elapsed)

    return cast(F, wrapper)


async def _interrupted(services: Any, turn: Any) -> None:
    """End a turn shutdown cut off: listeners see it end; a person's turn gets an answer.
    One whose release stored its answer (or ended its run) just before the cut finishes as usual.

    A watch's turn is left unanswered on purpose: its run goes back to the queue and the retry
    writes the answer (one per run, see chat_messages_run_role_key).
    """
    try:
        if turn.run_id is None:
            stored = await repo.insert_chat_message(
                services.db, message_id=turn.message_id, chat_id=turn.chat.id,
                workspace_id=turn.chat.workspace_id, role="assistant", source=turn.source,
                parts=[{"type": "text", "text": INTERRUPTED}], run_id=None,
            )  # fmt: skip
            if stored is None:  # the answer went in with the release, just before the cut
                await events.publish(services.redis, turn.chat.id, turn.id, parts.finish())
                return
        elif await _run_ended(services, turn.run_id):
            # The release ended the run with its answer just before the cut: nothing to retry.
            await events.publish(services.redis, turn.chat.id, turn.id, parts.finish())
            return
        await events.publish(services.redis, turn.chat.id, turn.id, parts.error(
            "interrupted", INTERRUPTED if turn.run_id is None else "Interrupted; retrying soon."
        ))  # fmt: skip
    except Exception:
        logger.exception("could not record an interrupted turn")


async def _run_ended(services: Any, run_id: uuid.UUID) -> bool:
    """Whether the run is over; unknown (the database away) counts as not."""
    try:
        return not await repo.run_is_running(services.db, run_id=run_id)
    except errors.LookoutError:
        return False


def watch_run(fn: F) -> F:
    """For `runner.execute`: run id on every line, runs by status; a cut-off run is requeued."""
    arguments = _arguments(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = arguments(*args, **kwargs)
        services, run_id = given["services"], given["run_id"]
        with logs.bound(run_id=run_id):
            try:
                status = await fn(*args, **kwargs)
            except asyncio.CancelledError:
                await asyncio.shield(_requeue_run(services, run_id))
                raise
            metrics.WATCH_RUNS.labels(status).inc()
            logger.info("watch run %s", status)
            return status

    return cast(F, wrapper)


async def _requeue_run(services: Any, run_id: uuid.UUID) -> None:
    await repo.requeue_run(services.db, run_id=run_id)
    metrics.WATCH_RUNS.labels("requeued").inc()
    logger.warning("watch run cut off by shutdown: back in the queue")


def job(fn: F) -> F:
    """For `job_runner.execute`: job id on every line; a job cut off by shutdown is requeued."""
    arguments = _arguments(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = arguments(*args, **kwargs)
        services, job_id = given["services"], given["job_id"]
        with logs.bound(job_id=job_id):
            try:
                return await fn(*args, **kwargs)
            except asyncio.CancelledError:
                await asyncio.shield(repo.release_job(services.db, job_id=job_id))
                logger.warning("job cut off by shutdown: back in the queue")
                raise

    return cast(F, wrapper)


def job_charged(verb: str, door: str, charged: int) -> None:
    if charged:
        metrics.CREDITS.labels(_verb_label(verb), door).inc(charged)
