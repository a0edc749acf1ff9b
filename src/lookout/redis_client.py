"""The Redis client of a process: a pool that waits for a free connection instead of failing,
and a lane of its own for the scripts every request runs (Script, Client)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

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
# Connections a client's script lane (below) opens at most; more scripts at once take the pool.
LANE_CONNECTIONS = 16


def connect(url: str) -> Client:
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
    return Client(connection_pool=pool)


class Client(aioredis.Redis):
    """redis-py's client, with a lane for Script's EVALSHA: connections of its own, used one
    command at a time and put back once their answer is read. redis-py spends ~200 us of CPU
    on a script call here (its pool's lock, timeout and observability records, a readiness
    check of the socket, the retry and deprecation wrappers), the lane ~125 us (2026-12-07,
    20,000 calls of the rate limiter's ratelimit.hit, 16 at once; the REST door's first round
    trip: its own CPU a call 1.07 -> 0.89 and 1.16 -> 1.01 ms, bench/_door_ab.py). Whatever
    the lane cannot answer in step (a connection lost, as after a Redis restart; a script
    Redis no longer knows) is asked again through redis-py, with its retries and its loading
    of the script."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lane = _Lane(self.connection_pool)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await self.lane.close()
        await super().aclose(close_connection_pool)


# What the lane answers when the call must go through redis-py instead.
_ASIDE = object()


class _Lane:
    def __init__(self, pool: aioredis.ConnectionPool) -> None:
        self.pool = pool
        self.idle: list[aioredis.connection.AbstractConnection] = []
        self.busy = 0
        self.loop: asyncio.AbstractEventLoop | None = None  # its connections' loop
        self.closed = False

    async def evalsha(self, sha: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The script's answer, or _ASIDE."""
        loop = asyncio.get_running_loop()
        self.loop = self.loop or loop
        full = not self.idle and self.busy >= LANE_CONNECTIONS
        if self.closed or full or loop is not self.loop:  # another loop: not its connections
            return _ASIDE
        conn = self.idle.pop() if self.idle else self._open()
        self.busy += 1
        try:
            await conn.send_command("EVALSHA", sha, len(keys), *keys, *args)
            answer = await conn.read_response()
        except aioredis.ConnectionError:  # it disconnected itself; redis-py retries
            return _ASIDE
        except NoScriptError:  # its answer was read: the connection is in step
            await self._put_back(conn)
            return _ASIDE
        except aioredis.ResponseError:
            await self._put_back(conn)
            raise
        except BaseException:  # a timeout, a cancellation: its answer may still come
            await conn.disconnect(nowait=True)
            raise
        finally:
            self.busy -= 1
        await self._put_back(conn)
        return answer

    def _open(self) -> aioredis.connection.AbstractConnection:
        return self.pool.connection_class(**self.pool.connection_kwargs)

    async def _put_back(self, conn: aioredis.connection.AbstractConnection) -> None:
        if self.closed:  # closed while it was in use
            await conn.disconnect(nowait=True)
        else:
            self.idle.append(conn)

    async def close(self) -> None:
        self.closed = True
        idle, self.idle = self.idle, []
        if self.loop is not asyncio.get_running_loop():
            return  # closed from another loop: its connections' transports are that loop's
        for conn in idle:
            await conn.disconnect(nowait=True)


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
        if isinstance(client, Client):
            answer = await client.lane.evalsha(self._script.sha, keys, args)
            if answer is not _ASIDE:
                return answer
        return await self._script(keys=keys, args=args, client=client)
