"""The Redis client of a process: a pool that waits for a free connection instead of failing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.commands.core import AsyncScript

MAX_CONNECTIONS = 100
# What Redis being away (restarting, unreachable, too slow) raises through this client.
UNREACHABLE = (aioredis.ConnectionError, aioredis.TimeoutError, OSError)
# Waiting for a connection beyond this means Redis is the bottleneck: say so (Unavailable).
POOL_WAIT_S = 10
# Must outlast the longest blocking read (chat.hub's XREAD blocks for 5 s).
SOCKET_TIMEOUT_S = 15
# After a Redis restart every pooled connection is dead; without a retry the first command on
# each failed ("Connection closed by server"): scheduled turns failed after Redis was back
# (tests/reliability/test_faults_redis.py). A retry reconnects; three take under a second.
# Timeouts are not retried: a blocking read must not wait three times as long.
RETRIES = 3


def connect(url: str) -> aioredis.Redis:
    """A client whose pool blocks up to POOL_WAIT_S when every connection is busy.

    redis-py's default pool raises "Too many connections" at once: a burst of 150 SSE clients
    made that happen on one web process.
    """
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=POOL_WAIT_S,
        socket_connect_timeout=2,
        socket_timeout=SOCKET_TIMEOUT_S,
        retry=Retry(
            ExponentialBackoff(cap=0.5, base=0.05),
            RETRIES,
            supported_errors=(aioredis.ConnectionError,),
        ),
    )
    return aioredis.Redis(connection_pool=pool)


def listener(url: str) -> aioredis.Redis:
    """A client on one dedicated connection for a long blocking read (chat.hub's XREAD).

    Outside the shared pool, so a read that blocks for seconds never takes a pooled connection
    from requests. No retries: the reader handles a lost connection itself (it must learn the
    new connection's CLIENT ID before anyone can wake it).
    """
    return aioredis.Redis.from_url(
        url,
        single_connection_client=True,
        socket_connect_timeout=2,
        socket_timeout=SOCKET_TIMEOUT_S,
        retry=Retry(NoBackoff(), 0),
    )


class Script:
    """A Lua script run with EVALSHA on any client (loaded into Redis on first use), built once:
    `client.register_script` per call hashes the script text every time."""

    def __init__(self, source: str) -> None:
        self._script = AsyncScript(cast(Any, None), source.encode("utf-8"))

    async def __call__(
        self, client: aioredis.Redis, *, keys: Sequence[str], args: Sequence[str | int | bytes]
    ) -> Any:
        return await self._script(keys=keys, args=args, client=client)
