"""The LangGraph graph of a chat: one node that plans, calls verbs and answers.

The thread id is the chat id; the Postgres checkpointer keeps the (bounded) state between turns,
which is how a scheduled turn knows what the previous one saw.

LangGraph (and LangChain and LangSmith under it: ~50 MiB RSS, ~1.5 s of CPU to import) loads
with a process's first turn, not at its start: `OnDemand` opens the saver and builds the graph
then, importing them on a thread so the web's event loop keeps serving meanwhile. A web process
serving the REST and MCP doors only, or a worker with no watch due, never holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import uuid
from typing import TYPE_CHECKING, Any

import asyncpg

from lookout import parts
from lookout.agent import planner_llm, planner_rules, pruning, report, state, volatile
from lookout.agent.context import TurnContext
from lookout.db import checkpointer

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.runtime import Runtime

    Graph = CompiledStateGraph[state.ChatState, TurnContext, state.ChatState, state.ChatState]

_DELTA_WORDS = 8
# What a turn imports, loaded on a thread before the first one (OnDemand.graph).
_TURN_MODULES = ("langgraph.graph", "langgraph.checkpoint.postgres.aio", "langchain_core.messages")


async def write_text(ctx: TurnContext, text: str) -> None:
    """Stream `text` as one text part, a few words per delta."""
    text_id = f"text_{uuid.uuid4().hex[:12]}"
    await ctx.emit(parts.text_start(text_id))
    words = text.split(" ")
    for start in range(0, len(words), _DELTA_WORDS):
        chunk = " ".join(words[start : start + _DELTA_WORDS])
        await ctx.emit(parts.text_delta(text_id, chunk if start == 0 else " " + chunk))
    await ctx.emit(parts.text_end(text_id))


async def respond(current: state.ChatState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    ctx = runtime.context
    question, reply = await _reply(current, ctx)
    answer = "\n\n".join(reply.sentences)
    if not reply.streamed:
        await write_text(ctx, answer)
    if ctx.scheduled:  # what this run found: the run's data, and the changes to notify
        for part in report.parts_of(ctx.diffs):
            await ctx.emit(part)
    turn = {"at": ctx.now.isoformat(), "text": question, "source": ctx.source, "answer": answer}
    turns, summary = state.add_turn(current, turn)
    return {
        "turns": turns, "summary": summary, "pending": reply.pending, "pages": reply.pages,
        "proposal": reply.proposal, "watch": reply.watch,
    }  # fmt: skip


async def _reply(current: state.ChatState, ctx: TurnContext) -> tuple[str, planner_rules.Reply]:
    """The planner's reply; or, to "include the … line again", the volatile lines back."""
    pages = dict(current.get("pages") or {})
    if not ctx.scheduled and (said := volatile.undo(current["input"], pages)):
        return current["input"], planner_rules.Reply(sentences=[said], pages=pages)
    planner = planner_llm.respond if planner_llm.enabled(ctx.services.settings) else None
    return await (planner or planner_rules.respond)(current, ctx)


def build(saver: BaseCheckpointSaver[Any]) -> Graph:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(state.ChatState, context_schema=TurnContext)
    builder.add_node("respond", respond)  # type: ignore[call-overload]
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=saver)


def config(chat_id: uuid.UUID) -> RunnableConfig:
    return {"configurable": {"thread_id": str(chat_id)}}


async def run(graph: Graph, ctx: TurnContext, text: str) -> None:
    """One turn on the chat's thread; only the final state is checkpointed (durability=exit)."""
    inputs: state.ChatState = {"input": text}
    await graph.ainvoke(inputs, config(ctx.chat_id), context=ctx, durability="exit")


async def prune_if_due(graph: Graph, chat_id: uuid.UUID) -> None:
    """After a turn's checkpoint is stored: older checkpoints are never read again; the sweep in
    agent.pruning keeps one per thread so turn 1,000 costs what turn 10 does (NOTES: 13.2 MB ->
    0.16 MB for 40 turns), and every INLINE_EVERY-th turn of a process prunes its thread now."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    if pruning.due(chat_id) and isinstance(graph.checkpointer, AsyncPostgresSaver):
        await pruning.prune_now(graph.checkpointer, chat_id)


class OnDemand:
    """A process's saver and graph, opened at the first call that needs them; `aclose` closes
    them. Used on one event loop (the web's, or the worker's AsyncIO thread)."""

    def __init__(self, dsn: str, db: asyncpg.Pool, *, max_size: int = 10) -> None:
        self._dsn, self._db, self._max_size = dsn, db, max_size
        self._stack = contextlib.AsyncExitStack()
        self._lock = asyncio.Lock()
        self._saver: AsyncPostgresSaver | None = None
        self._graph: Graph | None = None

    async def saver(self) -> AsyncPostgresSaver:
        async with self._lock:
            if self._saver is None:
                await asyncio.to_thread(_import_turn_modules)
                opened = checkpointer.saver_context(self._dsn, max_size=self._max_size, db=self._db)
                self._saver = await self._stack.enter_async_context(opened)
            return self._saver

    async def graph(self) -> Graph:
        saver = await self.saver()
        if self._graph is None:
            self._graph = build(saver)
        return self._graph

    async def aclose(self) -> None:
        self._saver = self._graph = None
        await self._stack.aclose()


def _import_turn_modules() -> None:
    for name in _TURN_MODULES:
        importlib.import_module(name)
