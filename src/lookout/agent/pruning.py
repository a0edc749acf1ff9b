"""Old checkpoints of a chat are never read again: prune them in batches, not after every turn.

Pruning inside each turn cost ~36 % of a scheduled turn's CPU (bench/_ablate.py: 28.9 -> 18.6 ms
a turn). A once-a-minute sweep keeps the latest checkpoint of every thread that has more than
one, found in Postgres itself, and every INLINE_EVERY-th turn a process runs on a thread prunes
it at once, so a thread holds at most INLINE_EVERY extra checkpoints per worker process, sweep
or no sweep (bench/watches.py: 500 turns in a row grew one chat to 1.7 MB without it). Nothing
is marked anywhere per turn: the Redis round trip that used to mark a thread was ~3 % of a
worker's CPU (py-spy --gil on bench/versus.py).
"""

from __future__ import annotations

import collections
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import asyncpg

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

logger = logging.getLogger(__name__)

BATCH = 500
MAX_BATCHES = 20  # a sweep prunes at most this many batches; the next minute goes on
INLINE_EVERY = 20
_MAX_TRACKED = 50_000  # threads whose turns this process counts (forgetting only delays a prune)

# The threads with an older checkpoint to drop (LangGraph's table: thread, namespace, id).
_CROWDED = """
SELECT thread_id FROM checkpoints GROUP BY thread_id HAVING count(*) > 1 LIMIT $1
"""

_turns: collections.Counter[uuid.UUID] = collections.Counter()


def due(chat_id: uuid.UUID) -> bool:
    """Count a turn on the thread; True on every INLINE_EVERY-th one this process runs."""
    count = _turns[chat_id] + 1
    if count >= INLINE_EVERY:
        del _turns[chat_id]
        return True
    if len(_turns) >= _MAX_TRACKED:
        _turns.clear()
    _turns[chat_id] = count
    return False


async def prune_now(saver: AsyncPostgresSaver, chat_id: uuid.UUID) -> None:
    """Keep only the thread's latest checkpoint; a clash with the sweep leaves it to the sweep."""
    try:
        await saver.aprune([str(chat_id)], strategy="keep_latest")
    except Exception:
        logger.warning("inline checkpoint prune deferred to the sweep", extra={"chat_id": chat_id})


async def sweep(db: asyncpg.Pool, saver_of: Callable[[], Awaitable[AsyncPostgresSaver]]) -> int:
    """Prune every thread holding more than one checkpoint (in batches); how many were.
    `saver_of` is awaited only when there is one: a worker with no turn yet loads no LangGraph."""
    done = 0
    for _ in range(MAX_BATCHES):
        thread_ids = [row["thread_id"] for row in await db.fetch(_CROWDED, BATCH)]
        if not thread_ids:
            break
        saver = await saver_of()
        try:
            await saver.aprune(thread_ids, strategy="keep_latest")
        except Exception:
            # A turn writing the same thread meanwhile makes keep_latest fail its snapshot:
            # the threads are still crowded, so the next sweep finds them again.
            logger.warning("checkpoint prune deferred for %d thread(s)", len(thread_ids))
            break
        done += len(thread_ids)
    return done
