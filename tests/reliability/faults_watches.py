"""Watches for fault tests: make them, make them due, tick the dispatcher, read their runs."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import asyncpg

from lookout import broker
from lookout.access.principals import Principal
from lookout.db import repo
from lookout.settings import Settings
from lookout.watches import service

TERMINAL = ("succeeded", "failed", "skipped")
YEARLY = "0 0 1 1 *"  # a cadence that never comes due while a test runs (New Year aside)


async def make_watches(
    db: asyncpg.Pool,
    settings: Settings,
    user_id: uuid.UUID,
    workspace_id: uuid.UUID,
    message: str,
    count: int,
) -> list[repo.Automation]:
    """`count` watched chats asking `message` (the tests make them due by hand): once a year,
    so no fire of their own comes due while a test runs (an hourly one crossing hh:00 did, and a
    kill cycle's next run was then skipped as a duplicate)."""
    owner = Principal(kind="session", workspace_id=workspace_id, role="owner", user_id=user_id)
    made = []
    for n in range(count):
        chat = await repo.insert_chat(
            db, workspace_id=workspace_id, created_by=user_id, title=f"watch {n}"
        )
        watch = await service.create(
            db, settings, owner, chat=chat, message=message, cadence=YEARLY
        )
        made.append(watch)
    return made


async def make_due(db: asyncpg.Pool, automation_ids: list[uuid.UUID]) -> None:
    await db.execute(
        "UPDATE automations SET next_run_at = clock_timestamp() - interval '1 second' "
        "WHERE id = ANY($1::uuid[])",
        automation_ids,
    )


async def tick(settings: Settings) -> None:
    """What the scheduler sends every minute: a dispatch_due_watches message (dispatch + sweep)."""
    actor = broker.setup(settings).get_actor("dispatch_due_watches")
    await asyncio.to_thread(actor.send)


async def runs(db: asyncpg.Pool, automation_ids: list[uuid.UUID]) -> list[asyncpg.Record]:
    return await db.fetch(
        "SELECT id, automation_id, status, error, scheduled_for, created_at, finished_at "
        "FROM automation_runs WHERE automation_id = ANY($1::uuid[]) ORDER BY created_at",
        automation_ids,
    )


async def wait_statuses(
    db: asyncpg.Pool,
    run_ids: list[uuid.UUID],
    wanted: tuple[str, ...],
    seconds: float,
    *,
    settings: Settings | None = None,
    tick_every: float = 1.0,
    strict: bool = True,
) -> dict[uuid.UUID, str]:
    """Wait until every run has a status in `wanted`; with settings, tick the dispatcher (its
    sweep fails runs whose worker died) every `tick_every` seconds meanwhile. Not strict: the
    statuses as they are when time is up."""
    deadline, next_tick = time.monotonic() + seconds, 0.0
    statuses: dict[uuid.UUID, str] = {}
    while time.monotonic() < deadline:
        rows = await db.fetch(
            "SELECT id, status FROM automation_runs WHERE id = ANY($1::uuid[])", run_ids
        )
        statuses = {row["id"]: row["status"] for row in rows}
        if len(statuses) == len(run_ids) and all(s in wanted for s in statuses.values()):
            return statuses
        if settings is not None and time.monotonic() >= next_tick:
            await tick(settings)
            next_tick = time.monotonic() + tick_every
        await asyncio.sleep(0.1)
    if strict:
        raise AssertionError(f"runs not {wanted} after {seconds} s: {statuses}")
    return statuses


async def new_runs(
    db: asyncpg.Pool, automation_ids: list[uuid.UUID], known: set[uuid.UUID], seconds: float
) -> list[uuid.UUID]:
    """The runs created since `known` (one per automation), waiting for all of them."""
    deadline = time.monotonic() + seconds
    found: list[uuid.UUID] = []
    while time.monotonic() < deadline:
        found = [row["id"] for row in await runs(db, automation_ids) if row["id"] not in known]
        if len(found) >= len(automation_ids):
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"only {len(found)} of {len(automation_ids)} runs were dispatched")


async def chat_of_runs(db: asyncpg.Pool, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """{run id: the chat its watch speaks in}."""
    rows = await db.fetch(
        "SELECT r.id, (a.action ->> 'thread_id')::uuid AS chat_id FROM automation_runs r "
        "JOIN automations a ON a.id = r.automation_id WHERE r.id = ANY($1::uuid[])",
        run_ids,
    )
    return {row["id"]: row["chat_id"] for row in rows}


async def messages_by_run(db: asyncpg.Pool, chat_ids: list[uuid.UUID]) -> dict[Any, list[str]]:
    """{run id (None for interactive turns): roles of its stored messages}."""
    rows = await db.fetch(
        "SELECT run_id, role FROM chat_messages WHERE chat_id = ANY($1::uuid[]) ORDER BY seq",
        chat_ids,
    )
    found: dict[Any, list[str]] = {}
    for row in rows:
        found.setdefault(row["run_id"], []).append(row["role"])
    return found
