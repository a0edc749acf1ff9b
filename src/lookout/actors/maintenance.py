"""Operational actors: a probe that proves a worker can reach its database and checkpointer."""

from __future__ import annotations

import json
import logging
import uuid

import dramatiq

from lookout import periodic, redis_keys
from lookout.actors import runtime, ticked
from lookout.agent import pruning
from lookout.db import oauth as oauth_db
from lookout.db import repo

logger = logging.getLogger(__name__)

PROBE_TTL_S = 300


def probe_key(probe_id: str) -> str:
    return redis_keys.probe(probe_id)


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=30_000)
async def probe(probe_id: str) -> None:
    """Touch the asyncpg pool and the checkpointer; leave the outcome in Redis for the caller."""
    state = runtime.current()
    database_ok = await repo.ping(state.db)
    config = {"configurable": {"thread_id": f"probe-{uuid.UUID(probe_id)}", "checkpoint_ns": ""}}
    checkpoint = await (await state.agent.saver()).aget_tuple(config)  # type: ignore[arg-type]
    outcome = {"database": database_ok, "checkpointer": checkpoint is None}
    await state.redis.set(probe_key(probe_id), json.dumps(outcome), ex=PROBE_TTL_S)


@dramatiq.actor(max_retries=0, time_limit=60_000, **ticked.options(periodic.SWEEP_EXPIRED))
async def sweep_expired() -> None:
    """Every ten minutes: forget expired sessions, idempotency records, finished jobs, dead
    OAuth codes and tokens, and OAuth clients nobody uses."""
    state = runtime.current()
    counts = await repo.delete_expired(state.db)
    idle_days = state.settings.oauth_client_idle_days
    counts |= await oauth_db.delete_expired(state.db, unused_client_days=idle_days)
    logger.info("swept expired rows: %s", counts)


@dramatiq.actor(max_retries=0, time_limit=55_000, **ticked.options(periodic.PRUNE_CHECKPOINTS))
async def prune_checkpoints() -> None:
    """Every minute: keep only the latest checkpoint of every chat that has more than one."""
    state = runtime.current()
    pruned = await pruning.sweep(state.db, state.agent.saver)
    if pruned:
        logger.info("pruned the checkpoints of %d chat(s)", pruned)
