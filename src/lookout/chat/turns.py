"""begin + execute: the one way every turn runs, interactive or scheduled.

lease + the user message (begin; a scheduled turn's come with the claim of its run, see
watches.runner) → run the graph (thread = chat) → publish every part to the chat's stream → the
answer + its checkpoint + release the lease (if still ours) → finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from lookout import errors, parts
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.agent import graph, report
from lookout.agent.context import TurnContext, WatchTools
from lookout.chat import events, lease
from lookout.db import checkpointer, repo
from lookout.ops import instrument

logger = logging.getLogger(__name__)

MAX_TEXT = 8000
# A scheduled turn has nobody waiting on each word: its parts go out together, at the end or
# every this many seconds (a watch that scrapes one page is one Redis write, not five); one
# nobody listens to goes out once, at its end, its text in one delta (28-44 Redis commands a
# turn on realistic pages before, counting what the publishing script runs; see
# tests/integration/test_scheduled_turn_cost.py).
SCHEDULED_LINGER_S = 0.5
CANCELLED_DRAIN_S = 1.0
INTERRUPTED = "I was interrupted before I could finish (the service restarted). Please ask again."
WatchFactory = Callable[[TurnContext], WatchTools | None]
# A watch run's final (status, error) when the turn's parts alone decide it, else None: the run
# is then finished in the statement that stores the answer (see runner).
RunEnd = Callable[[list[parts.Part]], tuple[str, str | None] | None]
# What a watch run keeps of its turn: the pages it read ({url, title, markdown}), the results of
# the searches it made ({url: the search, title, kind: "items", items: {identity: line}}) and
# the credits its verb calls settled (watches.history).
RunRead = Callable[[list[dict[str, Any]], int], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class Turn:
    """A turn that holds its chat's lease and has not run yet."""

    id: uuid.UUID
    chat: repo.Chat
    token: uuid.UUID
    message_id: uuid.UUID
    source: str
    run_id: uuid.UUID | None = None
    # The thread's latest checkpoint when the statement that took the lease read it too.
    checkpoint: checkpointer.Prefetched | None = None
    manual: bool = False  # a watch's run someone asked for (Run now), not a scheduled one


def check_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise errors.InvalidInput("Send a message with some text.", fields={"text": ["required"]})
    if len(text) > MAX_TEXT:
        raise errors.InvalidInput(
            f"A message has at most {MAX_TEXT} characters.", fields={"text": ["too long"]}
        )
    return text.strip()


async def begin(
    services: Services,
    chat: repo.Chat,
    text: str,
    *,
    source: str,
    run_id: uuid.UUID | None = None,
) -> Turn:
    """Take the chat's lease for a new turn and store its message `text`, in one statement
    (Busy, and nothing stored, when another turn holds the chat)."""
    asked = repo.NewMessage(uuid.uuid4(), "user", source, [{"type": "text", "text": text}], run_id)
    token = await lease.acquire(services.db, chat.id, message=asked)
    return Turn(uuid.uuid4(), chat, token, uuid.uuid4(), source, run_id)


@instrument.chat_turn
async def execute(
    services: Services,
    chat_graph: graph.Graph,
    turn: Turn,
    text: str,
    principal: Principal,
    *,
    watches: WatchFactory | None = None,
    run_end: RunEnd | None = None,
    condition: dict[str, Any] | None = None,
    on_read: RunRead | None = None,
) -> list[parts.Part]:
    """Run a begun turn to the end; returns the parts it published. Never leaves the lease.
    Cut off by shutdown, it is ended as `_interrupted` says, then the cancellation goes on."""
    try:
        return await _execute(
            services, chat_graph, turn, text, principal,
            watches=watches, run_end=run_end, condition=condition, on_read=on_read,
        )  # fmt: skip
    except asyncio.CancelledError:
        await asyncio.shield(_interrupted(services, turn))
        raise


async def _execute(
    services: Services,
    chat_graph: graph.Graph,
    turn: Turn,
    text: str,
    principal: Principal,
    *,
    watches: WatchFactory | None,
    run_end: RunEnd | None,
    condition: dict[str, Any] | None,
    on_read: RunRead | None,
) -> list[parts.Part]:
    emitted: list[parts.Part] = []
    scheduled = turn.source == "automation"
    batched = scheduled and not await _listened(services, turn.chat.id)
    publisher = events.Publisher(
        services.redis, turn.chat.id, turn.id,
        linger_s=SCHEDULED_LINGER_S if scheduled else 0.0, batched=batched,
    )  # fmt: skip

    async def emit(part: parts.Part) -> None:
        emitted.append(part)
        await publisher.emit(part)

    try:
        async with lease.kept(services.db, turn.chat.id, turn.token) as held:
            await emit(parts.start(str(turn.message_id), chat_id=str(turn.chat.id),
                                   source=turn.source, **_manual(turn)))  # fmt: skip
            ctx = TurnContext(
                services=services, principal=principal, chat_id=turn.chat.id, turn_id=turn.id,
                source=turn.source, emit=emit, now=dt.datetime.now(dt.UTC),
                job_deadline_s=services.settings.chat_job_deadline_s, question=text,
                condition=condition,
            )  # fmt: skip
            if watches is not None:
                ctx = dataclasses.replace(ctx, watches=watches(ctx))
            with checkpointer.deferring(str(turn.chat.id), turn.checkpoint) as deferred:
                failed = await _run_graph(chat_graph, ctx, text)
            # The answer, what its verb calls cost and the state the next turn reads are stored
            # with the release, at once.
            answer = parts.to_message_parts(emitted)
            if turn.source == "automation":  # the verdict and what changed, not the page again
                answer = report.stored(answer)
            held.closing = repo.NewMessage(
                turn.message_id, "assistant", turn.source, answer, turn.run_id
            )
            held.checkpoint = deferred.write
            held.settles = [(s.workspace_id, s.request_id, s.charged) for s in ctx.settlements]
            if turn.run_id is not None and run_end is not None:
                held.run_end = run_end(emitted)
            if turn.run_id is not None:
                held.run_changes = report.run_data(emitted)
    except errors.LookoutError as exc:
        # Postgres or Redis failed outside the graph: the listener hears why now, rather than
        # "interrupted" when its idle check finds no turn in flight.
        with contextlib.suppress(errors.LookoutError):
            await emit(parts.error(exc.code, exc.message))
            await publisher.drain()
        raise
    except asyncio.CancelledError:
        # What was emitted goes out before the interruption notice (`_interrupted`),
        # within the shutdown's wait for it.
        with contextlib.suppress(errors.LookoutError):
            await publisher.drain(CANCELLED_DRAIN_S)
        raise
    except BaseException:
        publisher.close()  # no write left retrying behind a turn that went wrong
        raise
    if on_read is not None:
        await _keep_read(on_read, ctx)
    # After the release: a client that sends its next message on `finish` finds the chat free.
    try:
        if not failed:
            await emit(parts.finish())
        await publisher.drain()
    except errors.Unavailable as exc:  # the answer is stored: only the live stream missed it
        logger.warning("turn stored but not streamed to its end: %s", exc.message)
    await graph.prune_if_due(chat_graph, turn.chat.id)
    return emitted


async def _interrupted(services: Services, turn: Turn) -> None:
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


async def _run_ended(services: Services, run_id: uuid.UUID) -> bool:
    """Whether the run is over; unknown (the database away) counts as not."""
    try:
        return not await repo.run_is_running(services.db, run_id=run_id)
    except errors.LookoutError:
        return False


async def _listened(services: Services, chat_id: uuid.UUID) -> bool:
    """Whether someone listens to the chat; Redis away: no (the publisher retries its one write)."""
    try:
        return await events.listened(services.redis, chat_id)
    except errors.Unavailable:
        return False


def _manual(turn: Turn) -> dict[str, bool]:
    """The start part says a run someone asked for is one (the page labels it so, live)."""
    return {"manual": True} if turn.manual else {}


async def _keep_read(on_read: RunRead, ctx: TurnContext) -> None:
    """The run's history of pages is a record, not the answer: a failure to keep it is logged."""
    try:
        await on_read(ctx.pages_read, sum(s.charged for s in ctx.settlements))
    except errors.LookoutError as exc:
        logger.warning("the pages of a run were not kept: %s", exc.message)


async def _run_graph(chat_graph: graph.Graph, ctx: TurnContext, text: str) -> bool:
    """Run the graph; a failure becomes an error part (True), never an exception."""
    try:
        await graph.run(chat_graph, ctx, text)
    except errors.LookoutError as exc:
        await ctx.emit(parts.error(exc.code, exc.message))
        return True
    except Exception:
        logger.exception("turn failed", extra={"turn_id": ctx.turn_id, "chat_id": ctx.chat_id})
        await ctx.emit(parts.error("internal", "Something went wrong on our side; try again."))
        return True
    return False
