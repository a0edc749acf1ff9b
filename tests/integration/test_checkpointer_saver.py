"""Our saver's asyncpg read and write of the latest checkpoint match LangGraph's own."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

import asyncpg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph

from lookout import errors
from lookout.db import checkpointer, repo


class _State(TypedDict, total=False):
    text: str  # stored inline in the checkpoint row
    seen: Annotated[list[dict[str, Any]], operator.add]  # stored as a blob


async def _step(state: _State) -> dict[str, Any]:
    return {"seen": [{"text": state.get("text"), "n": len(state.get("seen") or [])}]}


def _graph(saver: AsyncPostgresSaver) -> Any:
    builder = StateGraph(_State)
    builder.add_node("step", _step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder.compile(checkpointer=saver)


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


def _comparable(found: CheckpointTuple | None) -> tuple[Any, ...]:
    assert found is not None
    return (found.config, found.checkpoint, found.metadata, found.parent_config,
            list(found.pending_writes or []))  # fmt: skip


async def test_what_either_saver_wrote_both_read_the_same(
    database_url: str, db: asyncpg.Pool
) -> None:
    async with checkpointer.saver_context(database_url, db=db) as ours:
        assert isinstance(ours, checkpointer.Saver)
        library = AsyncPostgresSaver(ours.conn)  # same tables, the library's psycopg calls

        # Given a thread written by our saver (two turns) and one by the library's (two turns)
        for saver, thread in ((ours, "ours"), (library, "theirs")):
            for text in ("first", "second"):
                await _graph(saver).ainvoke({"text": text}, _config(thread), durability="exit")
        # And a pending write on the latest checkpoint of each (what an interrupted step leaves)
        for thread in ("ours", "theirs"):
            latest = await library.aget_tuple(_config(thread))
            assert latest is not None
            late = [("seen", [{"late": True}])]
            await library.aput_writes(latest.config, late, str(uuid.uuid4()))

        # Then each thread reads the same through either saver
        for thread in ("ours", "theirs"):
            mine = _comparable(await ours.aget_tuple(_config(thread)))
            assert mine == _comparable(await library.aget_tuple(_config(thread)))
            # And it holds both turns, one blob and one inline value, the pending write, a parent
            checkpoint = mine[1]
            assert [seen["text"] for seen in checkpoint["channel_values"]["seen"]] == [
                "first", "second",
            ]  # fmt: skip
            assert checkpoint["channel_values"]["text"] == "second"
            assert [write[1:] for write in mine[4]] == [("seen", [{"late": True}])]
            assert mine[3] is not None

        # And a thread never written reads as None through both
        assert await ours.aget_tuple(_config("nobody")) is None
        assert await library.aget_tuple(_config("nobody")) is None


async def test_a_checkpoint_asked_for_by_id_is_read_by_the_library(
    database_url: str, db: asyncpg.Pool
) -> None:
    async with checkpointer.saver_context(database_url, db=db) as ours:
        graph = _graph(ours)
        await graph.ainvoke({"text": "first"}, _config("t"), durability="exit")
        first = await ours.aget_tuple(_config("t"))
        await graph.ainvoke({"text": "second"}, _config("t"), durability="exit")
        assert first is not None

        # When the first checkpoint is asked for by its id after a second turn
        again = await ours.aget_tuple(first.config)

        # Then that one comes back, not the latest
        assert _comparable(again) == _comparable(first)


async def test_a_closed_database_is_unavailable_not_a_driver_error(database_url: str) -> None:
    async with checkpointer.saver_context(database_url) as ours:
        assert isinstance(ours, checkpointer.Saver)
        await ours.db.close()
        with pytest.raises(errors.Unavailable):
            await ours.aget_tuple(_config("t"))


async def _checkpoints(db: asyncpg.Pool, thread: str) -> int:
    return int(await db.fetchval("SELECT count(*) FROM checkpoints WHERE thread_id = $1", thread))


async def test_a_deferred_write_is_stored_by_whoever_holds_it_and_reads_back_the_same(
    database_url: str, db: asyncpg.Pool
) -> None:
    async with checkpointer.saver_context(database_url, db=db) as ours:
        graph = _graph(ours)
        await graph.ainvoke({"text": "first"}, _config("t"), durability="exit")

        # When a turn runs within `deferring` its thread
        with checkpointer.deferring("t") as deferred:
            await graph.ainvoke({"text": "second"}, _config("t"), durability="exit")
            # And another thread's turn runs in the same block
            await graph.ainvoke({"text": "other"}, _config("u"), durability="exit")

        # Then nothing of the deferred thread was stored, the other thread's was
        assert await _checkpoints(db, "t") == 1 and await _checkpoints(db, "u") == 1
        assert deferred.write is not None and deferred.write.thread_id == "t"

        # And once stored (as the turn's release stores it), it reads back as a turn written
        # at once would: both turns, with the first as its parent
        await repo.put_checkpoint(db, deferred.write)
        latest = await AsyncPostgresSaver(ours.conn).aget_tuple(_config("t"))
        assert latest is not None and latest.parent_config is not None
        seen = latest.checkpoint["channel_values"]["seen"]
        assert [s["text"] for s in seen] == ["first", "second"]


async def test_a_read_or_a_second_write_of_a_deferred_thread_stores_the_held_write_first(
    database_url: str, db: asyncpg.Pool
) -> None:
    async with checkpointer.saver_context(database_url, db=db) as ours:
        graph = _graph(ours)
        with checkpointer.deferring("t") as deferred:
            # When the thread is checkpointed, then read and checkpointed again in the block
            await graph.ainvoke({"text": "first"}, _config("t"), durability="exit")
            first = deferred.write
            await graph.ainvoke({"text": "second"}, _config("t"), durability="exit")

            # Then the first was stored before the read (which saw it), the second is held
            assert first is not None and deferred.write is not None
            stored = await db.fetchval("SELECT checkpoint_id FROM checkpoints")
            assert stored == first.checkpoint_id == deferred.write.parent_id
            assert deferred.write.checkpoint_id != first.checkpoint_id


async def test_a_prefetched_read_answers_the_first_read_of_its_thread_only(
    database_url: str, db: asyncpg.Pool
) -> None:
    async with checkpointer.saver_context(database_url, db=db) as ours:
        await _graph(ours).ainvoke({"text": "first"}, _config("t"), durability="exit")
        row = await repo.fetchrow(db, "latest_checkpoint", "t", "")
        assert row is not None
        stored = _comparable(await ours.aget_tuple(_config("t")))

        # A prefetched row answers the first read of its thread (here: "none yet", to tell)
        with checkpointer.deferring("t", checkpointer.Prefetched(None)):
            assert await ours.aget_tuple(_config("u")) is None  # another thread: the table
            assert await ours.aget_tuple(_config("t")) is None
            assert _comparable(await ours.aget_tuple(_config("t"))) == stored  # then the table
        # And a real prefetched row reads as the table does
        with checkpointer.deferring("t", checkpointer.Prefetched(dict(row))):
            assert _comparable(await ours.aget_tuple(_config("t"))) == stored
