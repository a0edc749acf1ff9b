"""Old checkpoints of a chat are never read again: prune them in batches, not after every turn.

Pruning inside each turn cost ~36 % of a scheduled turn's CPU (bench/_ablate.py: 28.9 -> 18.6 ms
a turn). A turn now marks its thread; a once-a-minute sweep keeps the latest checkpoint of every
marked thread, and every INLINE_EVERY-th turn of a thread prunes it at once, so a thread never holds
more than INLINE_EVERY extra checkpoints, sweep or no sweep (bench/watches.py: 500 turns in a
row grew one chat to 1.7 MB without it).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import redis.asyncio as aioredis
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

logger = logging.getLogger(__name__)

KEY = "lookout:checkpoints:to-prune"
BATCH = 500
INLINE_EVERY = 20
_COUNT_TTL_S = 3600


async def mark(redis: aioredis.Redis, chat_id: uuid.UUID) -> bool:
    """Mark the thread for the sweep; True when this turn should prune it right away."""
    count_key = f"lookout:checkpoints:turns:{chat_id}"
    async with redis.pipeline(transaction=False) as pipe:
        pipe.sadd(KEY, str(chat_id))
        pipe.incr(count_key)
        pipe.expire(count_key, _COUNT_TTL_S)
        _, count, _ = await pipe.execute()
    return int(count) % INLINE_EVERY == 0


async def prune_now(saver: AsyncPostgresSaver, chat_id: uuid.UUID) -> None:
    """Keep only the thread's latest checkpoint; a clash with the sweep leaves it to the sweep."""
    try:
        await saver.aprune([str(chat_id)], strategy="keep_latest")
    except Exception:
        logger.warning("inline checkpoint prune deferred to the sweep", extra={"chat_id": chat_id})


async def sweep(redis: aioredis.Redis, saver: AsyncPostgresSaver) -> int:
    """Prune every marked thread (in batches); returns how many threads were pruned."""
    done = 0
    while True:
        popped: Any = await redis.spop(KEY, BATCH)
        thread_ids = [t.decode() if isinstance(t, bytes) else str(t) for t in popped or []]
        if not thread_ids:
            return done
        try:
            await saver.aprune(thread_ids, strategy="keep_latest")
        except Exception:
            # A turn writing the same thread meanwhile makes keep_latest fail its snapshot:
            # leave the threads marked for the next sweep.
            logger.warning("checkpoint prune deferred for %d thread(s)", len(thread_ids))
            await redis.sadd(KEY, *thread_ids)
            return done
        done += len(thread_ids)
