"""A scheduled turn: claim the run, re-check the watch, run the chat turn as its creator."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from typing import Any

from lookout import errors, heartbeat, parts
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.agent import graph
from lookout.chat import lease, notices, turns
from lookout.db import checkpointer, repo
from lookout.notify import alerts, deliveries
from lookout.ops import instrument
from lookout.watches import history

logger = logging.getLogger(__name__)

RUN_LEASE_S = 90.0
_RECORDED = frozenset({"data-change", "data-condition"})  # parts the run acts on after the turn
OUT_OF_CREDITS = "insufficient_credits"


@instrument.watch_run
async def execute(services: Services, chat_graph: graph.Graph, run_id: uuid.UUID) -> str:
    """Run one claimed run to its end; returns the final status ('duplicate' if not claimed).
    A run cut off by shutdown goes back to the queue: its retry writes the answer."""
    try:
        return await _execute(services, chat_graph, run_id)
    except asyncio.CancelledError:
        await asyncio.shield(_requeue(services, run_id))
        raise


async def _requeue(services: Services, run_id: uuid.UUID) -> None:
    await repo.requeue_run(services.db, run_id=run_id)
    instrument.run_requeued()
    logger.warning("watch run cut off by shutdown: back in the queue")


async def _execute(services: Services, chat_graph: graph.Graph, run_id: uuid.UUID) -> str:
    # One round trip: the claim, the watch, its chat, its creator's role and, when it may run,
    # the start of its turn (the chat's lease, the question and the thread's checkpoint).
    chat_token = uuid.uuid4()
    claimed = await repo.claim_run(
        services.db, run_id=run_id, lease_s=RUN_LEASE_S, chat_token=chat_token,
        chat_lease_s=lease.LEASE_S, question_id=uuid.uuid4(),
    )  # fmt: skip
    if claimed is None:
        return "duplicate"

    async def renew() -> None:
        await repo.renew_run_lease(services.db, run_id=run_id, lease_s=RUN_LEASE_S)

    try:
        async with heartbeat.beating(RUN_LEASE_S / 3, renew):
            status, error, finished = await _run(services, chat_graph, claimed, chat_token)
    except BaseException:
        if claimed.chat_leased and claimed.chat is not None:
            await asyncio.shield(_free_chat(services, claimed.chat.id, chat_token))
        raise
    if not finished:
        await repo.finish_run(services.db, run_id=run_id, status=status, error=error)
    return status


async def _free_chat(services: Services, chat_id: uuid.UUID, token: uuid.UUID) -> None:
    """Free the chat the claim leased for a turn that did not begin (shutdown landed between
    them): its retry would find the chat busy and be skipped. A turn that began freed it itself,
    and this token holds nothing any more: a no-op. One try; the lease expires anyway."""
    with contextlib.suppress(errors.LookoutError):
        await repo.release_chat_lease(services.db, chat_id=chat_id, token=token)


async def _run(
    services: Services, chat_graph: graph.Graph, claimed: repo.ClaimedRun, chat_token: uuid.UUID
) -> tuple[str, str | None, bool]:
    """(status, error, whether the run is already finished: by its turn's last statement)."""
    run, automation, chat = claimed.run, claimed.automation, claimed.chat
    if automation is None or not automation.enabled:
        return "skipped", "The watch was stopped before this run.", False
    if chat is None:
        await repo.disable_automation(services.db, automation_id=automation.id)
        return "failed", "The chat of this watch no longer exists.", False
    principal = _creator(automation, claimed.creator_role)
    if principal is None:
        reason = "the person who started it no longer belongs to this workspace or may not spend"
        await _pause(services, automation, chat, reason)
        return "failed", f"Watch stopped: {reason}.", False
    text = str(automation.action["message"])
    if claimed.chat_leased:
        turn = turns.Turn(
            uuid.uuid4(), chat, chat_token, uuid.uuid4(), "automation", run.id,
            checkpoint=checkpointer.Prefetched(claimed.checkpoint),
        )  # fmt: skip
    else:  # the chat is busy, or a turn just ended on it: begin this one on its own
        try:
            turn = await turns.begin(services, chat, text, source="automation", run_id=run.id)
        except errors.Busy:
            return "skipped", "The chat was answering another message.", False

    turn = dataclasses.replace(turn, manual=run.manual)

    async def keep_read(pages: list[dict[str, Any]], credits: int) -> None:
        await history.record(services.db, automation, run.id, pages, credits)

    emitted = await turns.execute(
        services, chat_graph, turn, text, principal, run_end=_settled_by_parts,
        condition=automation.action.get("condition"), on_read=keep_read,
    )  # fmt: skip
    if _settled_by_parts(emitted) is not None:  # the usual run: nothing changed, nothing to do
        return *_outcome(emitted), True
    if _out_of_credits(emitted):
        return *await _paused_for_credits(services, automation, chat), False
    outcome = _outcome(emitted)
    verdict = alerts.verdict_of(emitted)
    if verdict is not None:  # a watch with a condition: the condition decides what is sent
        await alerts.after_run(services, automation, run.id, verdict, outcome[0] == "succeeded")
    elif outcome[0] == "succeeded":  # a change found by this run goes to its notification targets
        await deliveries.after_run(services, automation, run.id, emitted)
    return *outcome, False


def _outcome(emitted: list[parts.Part]) -> tuple[str, str | None]:
    failed = next((p for p in emitted if p["type"] == "error"), None)
    return ("failed", str(failed["errorText"])) if failed else ("succeeded", None)


def _settled_by_parts(emitted: list[parts.Part]) -> tuple[str, str | None] | None:
    """The run's end when its turn's parts alone decide it (nothing to notify, no pause): then
    the turn finishes the run in the statement that stores its answer, one transaction less."""
    if _out_of_credits(emitted) or any(p["type"] in _RECORDED for p in emitted):
        return None
    return _outcome(emitted)


def _out_of_credits(emitted: list[parts.Part]) -> bool:
    for part in emitted:
        output = part.get("output") if part["type"] == "tool-output-available" else None
        if isinstance(output, dict) and (output.get("error") or {}).get("code") == OUT_OF_CREDITS:
            return True
    return False


async def _paused_for_credits(
    services: Services, automation: repo.Automation, chat: repo.Chat
) -> tuple[str, str | None]:
    reason = "this workspace ran out of credits; add credits, then ask me to watch it again"
    await _pause(services, automation, chat, reason)
    return "failed", "Out of credits: the watch is paused."


def _creator(automation: repo.Automation, role: str | None) -> Principal | None:
    """The watch's creator as the system principal, if they may still spend in the workspace."""
    if role not in ("editor", "owner"):
        return None
    return Principal(
        kind="system", workspace_id=automation.workspace_id, role=role,
        user_id=automation.created_by,
    )  # fmt: skip


async def _pause(
    services: Services, automation: repo.Automation, chat: repo.Chat, reason: str
) -> None:
    """Disable the watch and say why in the chat (stored and sent to live listeners)."""
    await repo.disable_automation(services.db, automation_id=automation.id)
    text = f"I've paused watching: {reason}."
    paused = parts.data("watch", {"event": "paused", "id": str(automation.id), "reason": text})
    await notices.post(
        services, chat_id=chat.id, workspace_id=chat.workspace_id, text=text, extra=[paused]
    )
