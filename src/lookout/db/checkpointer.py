"""The LangGraph checkpointer: AsyncPostgresSaver, built on the loop using it.

Its tables, migrations, serializer, pruning and every rarely used call are the library's, over
its psycopg pool. The two calls every turn makes (read the thread's latest checkpoint, write the
new one) go through our asyncpg pool instead, one statement each: through psycopg they were
~15 % of a worker's CPU in a scheduled turn (py-spy --gil on bench/versus.py: the pipelined
write is three statements, and each call hopped to a thread to (de)serialize a few KB). A turn
carries both in its lease statements (`deferring`, chat.turns): the write is stored with its
answer when the lease is released, and a scheduled turn's read comes with the claim of its run.

LangGraph, LangChain and psycopg load with the first saver opened (`saver_context`), not with
this module: a web process that serves no chat turn holds none of them (~50 MiB RSS,
bench/footprint.py). `Saver` is made then too (`saver_class`).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import importlib.metadata
import inspect
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

import asyncpg

from lookout.db import pool, repo

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
    )
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    _Base = AsyncPostgresSaver
else:
    _Base = object

# A connection back in the pool for less than this is lent out again without a check: the
# check (a round trip on every checkout) was ~15 % of a scheduled turn's CPU. One idle longer
# is checked, so connections that sat through a Postgres restart are replaced, not lent out.
CHECK_IDLE_S = 5.0


class _NoLock(contextlib.AbstractAsyncContextManager[None]):
    async def __aexit__(self, *exc: object) -> None:
        return None


class _IdleCheck:
    """The pool's `reset` (on return) and `check` (on checkout) callbacks."""

    def __init__(self) -> None:
        self._returned: weakref.WeakKeyDictionary[AsyncConnection[Any], float] = (
            weakref.WeakKeyDictionary()
        )

    async def returned(self, conn: AsyncConnection[Any]) -> None:
        self._returned[conn] = time.monotonic()

    async def check(self, conn: AsyncConnection[Any]) -> None:
        from psycopg_pool import AsyncConnectionPool

        if time.monotonic() - self._returned.get(conn, -CHECK_IDLE_S) >= CHECK_IDLE_S:
            await AsyncConnectionPool.check_connection(conn)


@dataclasses.dataclass(frozen=True)
class Prefetched:
    """A thread's latest checkpoint row read with the turn's lease (None: the thread has none)."""

    row: Mapping[str, Any] | None


class Deferred:
    """A turn's checkpoint I/O carried by its lease statements (chat.turns): the read, when the
    lease statement made it (`prefetched`), and the write, kept to be stored with the release."""

    def __init__(self, thread_id: str, prefetched: Prefetched | None) -> None:
        self.thread_id = thread_id
        self.prefetched = prefetched
        self.write: repo.CheckpointWrite | None = None


_deferred: contextvars.ContextVar[Deferred | None] = contextvars.ContextVar(
    "lookout_deferred_checkpoint", default=None
)


@contextlib.contextmanager
def deferring(thread_id: str, prefetched: Prefetched | None = None) -> Iterator[Deferred]:
    """Within the block, the Saver keeps the thread's checkpoint write in the Deferred instead of
    storing it: its caller stores it (repo.release_chat_lease) or it is lost with the turn. Its
    first read of the thread's latest checkpoint is `prefetched`, when given."""
    token = _deferred.set(Deferred(thread_id, prefetched))
    try:
        yield _deferred.get()  # type: ignore[misc]
    finally:
        _deferred.reset(token)


class _Asyncpg(_Base):
    """What `Saver` (saver_class) puts before AsyncPostgresSaver: its latest-checkpoint read and
    checkpoint write use asyncpg.

    Same rows, same SQL (db/queries.sql: latest_checkpoint, put_checkpoint), same serializer;
    a Postgres outage surfaces as errors.Unavailable like every other statement of a turn.
    Within `deferring`, a write is kept for the caller instead (one statement less a turn).
    """

    db: asyncpg.Pool

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        from langgraph.checkpoint.base import CheckpointTuple, get_checkpoint_id

        conf = config["configurable"]
        thread_id, namespace = conf["thread_id"], conf.get("checkpoint_ns", "")
        await self._store_held(thread_id)  # a read sees every write before it
        if get_checkpoint_id(config):  # a checkpoint by id: history, never a turn
            return await super().aget_tuple(config)
        deferred = _deferred.get()
        row: Mapping[str, Any] | None
        if deferred and deferred.prefetched and deferred.thread_id == thread_id and not namespace:
            row, deferred.prefetched = deferred.prefetched.row, None  # read once, then the table
        else:
            row = await repo.fetchrow(self.db, "latest_checkpoint", thread_id, namespace)
        if row is None:
            return None
        if row["checkpoint"]["v"] < 4 and row["parent_checkpoint_id"]:
            return await super().aget_tuple(config)  # written by an old LangGraph: migrated there
        parent = row["parent_checkpoint_id"]
        checkpoint = row["checkpoint"]
        values = {
            **(checkpoint.get("channel_values") or {}),
            **self._load_blobs(row["channel_values"]),
        }
        ids = {"thread_id": thread_id, "checkpoint_ns": namespace}
        return CheckpointTuple(
            {"configurable": {**ids, "checkpoint_id": row["checkpoint_id"]}},
            cast("Checkpoint", {**checkpoint, "channel_values": values}),
            row["metadata"],
            {"configurable": {**ids, "checkpoint_id": parent}} if parent else None,
            self._load_writes(row["pending_writes"]),
        )

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        from langgraph.checkpoint.base import get_serializable_checkpoint_metadata
        from langgraph.checkpoint.serde.types import _DeltaSnapshot

        conf = config["configurable"]
        thread_id, namespace = conf["thread_id"], conf["checkpoint_ns"]
        # As the library stores it: primitive channel values inline, the others as blobs.
        inline = dict(checkpoint["channel_values"])
        blobs: dict[str, Any] = {}
        for name, value in checkpoint["channel_values"].items():
            if isinstance(value, _DeltaSnapshot):
                blobs[name] = inline.pop(name)
                inline[name] = True
            elif not (value is None or isinstance(value, str | int | float | bool)):
                blobs[name] = inline.pop(name)
        versions = {name: v for name, v in new_versions.items() if name in blobs}
        write = repo.CheckpointWrite(
            thread_id, namespace, checkpoint["id"], conf.get("checkpoint_id"),
            {**checkpoint, "channel_values": inline},
            dict(get_serializable_checkpoint_metadata(config, metadata)),
            [row[2:] for row in self._dump_blobs(thread_id, namespace, blobs, versions)],
        )  # fmt: skip
        deferred = _deferred.get()
        if deferred is not None and deferred.thread_id == thread_id and not namespace:
            await self._store_held(thread_id)  # a second checkpoint in one turn: the first now
            deferred.write, deferred.prefetched = write, None
        else:
            await repo.put_checkpoint(self.db, write)
        return {
            "configurable": {
                "thread_id": thread_id, "checkpoint_ns": namespace,
                "checkpoint_id": checkpoint["id"],
            }
        }  # fmt: skip

    async def _store_held(self, thread_id: str) -> None:
        deferred = _deferred.get()
        if deferred is not None and deferred.thread_id == thread_id and deferred.write:
            await repo.put_checkpoint(self.db, deferred.write)
            deferred.write = None


@functools.cache
def saver_class() -> type[AsyncPostgresSaver]:
    """AsyncPostgresSaver with `_Asyncpg`'s read and write (made once, when first needed)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    class Saver(_Asyncpg, AsyncPostgresSaver):
        def __init__(self, conn_pool: AsyncConnectionPool, db: asyncpg.Pool) -> None:
            super().__init__(conn_pool)  # type: ignore[arg-type]
            self.db = db

    # LangGraph asks inspect.signature whether put_writes takes task_path on every run (1.4 %
    # of a worker's CPU); a signature stored on the function is returned, not computed (13.5 ->
    # 4.4 us a call). These are the library's own functions (inherited): the signature is theirs.
    for method in (Saver.put_writes, Saver.aput_writes):
        method.__signature__ = inspect.signature(method)  # type: ignore[union-attr]
    return Saver


def __getattr__(name: str) -> Any:
    if name == "Saver":  # checkpointer.Saver, as when it was a class of this module
        return saver_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def psycopg_dsn(dsn: str) -> str:
    # psycopg accepts postgres:// and postgresql:// alike; asyncpg-only options never appear here.
    return dsn


@contextlib.asynccontextmanager
async def saver_context(
    dsn: str, *, max_size: int = 10, db: asyncpg.Pool | None = None
) -> AsyncIterator[AsyncPostgresSaver]:
    """Open the pools and the saver on the running loop; close them on exit.

    `db`: the process's asyncpg pool for the per-turn read and write (else one is opened here).
    """
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    idle = _IdleCheck()
    # min_size 0: the library's rarely used calls open a connection when one comes (and the pool
    # closes it after max_idle), so a process holds no idle psycopg connection and Postgres no
    # backend for it between them (bench/footprint.py's probe: one backend and ~0.4 MiB RSS of
    # `lookout web` less after a chat turn, 2026-12-04).
    conn_pool: AsyncConnectionPool = AsyncConnectionPool(
        psycopg_dsn(dsn),
        min_size=0,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
        check=idle.check,
        reset=idle.returned,
    )
    async with contextlib.AsyncExitStack() as stack:
        if db is None:
            db = await stack.enter_async_context(pool.pool_context(dsn, max_size=max_size))
        await conn_pool.open()
        stack.push_async_callback(conn_pool.close)
        yield _unlocked(saver_class()(conn_pool, db))  # type: ignore[arg-type]


def _unlocked(saver: AsyncPostgresSaver) -> AsyncPostgresSaver:
    # The saver serializes every checkpoint read and write behind one lock, which a single
    # shared connection needs; with a pool each call checks out its own connection. Measured:
    # the lock was held 56 of every 60 ms with 8 turns in flight (BENCHMARKS.md).
    saver.lock = _NoLock()  # type: ignore[assignment]
    return saver


# The package whose migrations make the checkpointer's tables (AsyncPostgresSaver.setup).
SAVER_PACKAGE = "langgraph-checkpoint-postgres"


def setup_marker() -> str | None:
    """What `lookout migrate` records once setup() ran with this version of the saver's package
    (its migrations change only with it); read from the package's metadata, nothing imported.
    None where the package has no metadata (a vendored copy): setup() then runs every time."""
    try:
        return f"checkpointer: {SAVER_PACKAGE} {importlib.metadata.version(SAVER_PACKAGE)}"
    except importlib.metadata.PackageNotFoundError:
        return None


async def setup(dsn: str) -> None:
    """Create the checkpointer's tables; run once, from `lookout migrate`."""
    async with saver_context(dsn, max_size=1) as saver:
        await saver.setup()
