"""Decorators for the four units of work: a verb call, a chat turn, a watch run, a job.

Each only binds the unit's ids to the log context and records its metrics (layer 3: it imports
nothing above lookout.access). What happens when shutdown cuts a unit off is the unit's own
code: the interrupted answer in chat.turns, the run requeue in watches.runner, the job release
in access.job_runner.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from lookout import errors, logs
from lookout.capabilities import registry
from lookout.ops import metrics

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


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
        turn = given["turn"]
        chat = turn.chat
        with logs.bound(turn_id=turn.id, chat_id=chat.id, workspace_id=chat.workspace_id,
                        run_id=turn.run_id):  # fmt: skip
            started, outcome = time.monotonic(), "failed"
            try:
                emitted = await fn(*args, **kwargs)
                outcome = "failed" if any(p["type"] == "error" for p in emitted) else "succeeded"
                return emitted
            except asyncio.CancelledError:  # chat.turns.execute answered "interrupted"
                outcome = "interrupted"
                raise
            finally:
                elapsed = time.monotonic() - started
                metrics.TURNS.labels(turn.source, outcome).inc()
                metrics.TURN_DURATION.labels(turn.source).observe(elapsed)
                logger.info("turn %s (%s) in %.2f s", outcome, turn.source, elapsed)

    return cast(F, wrapper)


def watch_run(fn: F) -> F:
    """For `runner.execute`: run id on every line, runs by status (a cut-off run's requeue is
    counted by `run_requeued`)."""
    arguments = _arguments(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        with logs.bound(run_id=arguments(*args, **kwargs)["run_id"]):
            status = await fn(*args, **kwargs)
            metrics.WATCH_RUNS.labels(status).inc()
            logger.info("watch run %s", status)
            return status

    return cast(F, wrapper)


def run_requeued() -> None:
    metrics.WATCH_RUNS.labels("requeued").inc()


def job(fn: F) -> F:
    """For `job_runner.execute`: job id on every line."""
    arguments = _arguments(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        with logs.bound(job_id=arguments(*args, **kwargs)["job_id"]):
            return await fn(*args, **kwargs)

    return cast(F, wrapper)


def job_charged(verb: str, door: str, charged: int) -> None:
    if charged:
        metrics.CREDITS.labels(_verb_label(verb), door).inc(charged)
