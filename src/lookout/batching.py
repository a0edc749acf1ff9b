"""Writes asked while one of their kind is being written go together into the next one.

A hot write (a credit reservation, a settle or refund) asked when none of its kind is in flight
is written at once: alone, unless others were asked in the same turn of the event loop.
Those asked while it is in flight wait for it and are then written together in one statement:
one round trip and one commit for all of them instead of one each, where each
would otherwise have waited for a connection or for the same row's lock. Each caller gets its
own answer before it returns. A statement for several that raises leaves each caller to write
its own alone, and so to get its own error.

Kinds are kept apart by `scope` as well as by statement: credits pass the workspace, so that a
statement locks at most one balance row (two processes' statements never wait on each other's
rows in opposite orders).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

# What one write is asked with, as its statement reads it.
Asked = tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Statement:
    """How one kind of write is written alone, and how several are written together (one
    answer each, in their order; raising: each is written alone)."""

    alone: Callable[[Any, Any, Asked], Awaitable[object]]
    many: Callable[[Any, Any, list[Asked]], Awaitable[list[object]]]


async def together(target: Any, scope: Hashable, statement: Statement, asked: Asked) -> object:
    """`statement`'s answer for `asked`, written on `target` (a pool, a client) alone or with
    the others of `scope` asked while this process writes one of its kind."""
    loop = asyncio.get_running_loop()
    key = (loop, scope, statement)
    writer = _writers.get(key)
    if writer is not None and (writer.task is None or writer.task.done()):
        writer = None  # its loop was closed before it ended (a test's loop)
    if writer is not None and writer.target is not target:  # another pool (tests open several)
        return await statement.alone(target, scope, asked)
    if writer is None:
        writer = _writers[key] = _Writer(target, key)
        writer.task = asyncio.create_task(writer.write_all())
    ask = _Ask(asked, loop.create_future())
    writer.asked.append(ask)
    answer = await asyncio.shield(ask.answer)
    if answer is _ALONE:
        return await statement.alone(target, scope, asked)
    return answer


@dataclasses.dataclass(frozen=True)
class _Ask:
    asked: Asked
    # What its statement answers for it, or _ALONE: its caller writes it alone.
    answer: asyncio.Future[object]


_ALONE = object()


class _Writer:
    """The writes of one kind and scope: its task writes those asked so far, then all those
    asked meanwhile in one statement, and so on until none is left; then it is gone."""

    def __init__(self, target: Any, key: _Key) -> None:
        self.target, self.key = target, key
        _, self.scope, self.statement = key
        self.asked: list[_Ask] = []
        self.task: asyncio.Task[None] | None = None

    async def write_all(self) -> None:
        batch: list[_Ask] = []
        try:
            while self.asked:
                batch, self.asked = self.asked, []
                await self._write(batch)
        finally:
            if _writers.get(self.key) is self:
                del _writers[self.key]
            for ask in [*batch, *self.asked]:  # cancelled (its loop is closing)
                if not ask.answer.done():
                    ask.answer.set_result(_ALONE)

    async def _write(self, batch: list[_Ask]) -> None:
        if len(batch) == 1:
            ask = batch[0]
            try:
                answer = await self.statement.alone(self.target, self.scope, ask.asked)
            except Exception as exc:
                ask.answer.set_exception(exc)
            else:
                ask.answer.set_result(answer)
            return
        try:
            answers = await self.statement.many(
                self.target, self.scope, [ask.asked for ask in batch]
            )
        except Exception:  # each caller writes its own again, and gets its own error
            answers = [_ALONE] * len(batch)
        for ask, answer in zip(batch, answers, strict=True):
            ask.answer.set_result(answer)


# By event loop too: `lookout dev-serve` runs its worker on a loop of its own, in another thread.
_Key = tuple[asyncio.AbstractEventLoop, Hashable, Statement]
_writers: dict[_Key, _Writer] = {}
