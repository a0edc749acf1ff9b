"""Where a scheduled turn's CPU goes: the same turns with one suspected cost taken out at a time.

    .venv/bin/python bench/_ablate.py [--watches 300] [--concurrency 8] [--rounds 4]

A diagnostic, not part of `make bench`. Turns run in this process as a worker process runs them
(runner.execute, `concurrency` at once on one event loop) over --watches watches whose pages
change 10 % a pass. Each variant monkeypatches Lookout in this process only (src/ is not
edited) and is timed on its own passes, variants interleaved (each round starts with the next)
over --rounds rounds, medians reported. CPU per turn: this process, and the postmaster tree +
redis-server. Variants:
- as is
- no prune: no `aprune(keep_latest)` after each turn (what pruning in a batch would save)
- no pool check: the checkpointer's psycopg pool without `check=` (one round trip a checkout)
- one delta: the answer published as one text delta instead of one per 8 words
- no saver lock: AsyncPostgresSaver takes one asyncio.Lock around every call even over a pool,
  so a process runs one checkpointer call at a time; here a semaphore as wide as the pool
- all four
Printed per turn: CPU, and wall time (with `concurrency` turns in flight: what bounds throughput).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _lookout
import _out
import _pages
import _procs
import services
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from lookout.agent import graph as chat_graph
from lookout.db import checkpointer


async def _run_without_prune(graph: Any, ctx: Any, text: str) -> None:
    inputs = {"input": text}
    await graph.ainvoke(inputs, chat_graph.config(ctx.chat_id), context=ctx, durability="exit")


@contextlib.asynccontextmanager
async def _saver_without_check(dsn: str, *, max_size: int = 10) -> AsyncIterator[Any]:
    conn_pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        dsn, min_size=1, max_size=max_size, open=False,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
    )  # fmt: skip
    await conn_pool.open()
    try:
        yield AsyncPostgresSaver(conn_pool)
    finally:
        await conn_pool.close()


_build = chat_graph.build


def _build_without_lock(saver: Any) -> Any:
    saver.lock = asyncio.Semaphore(10)  # saver_context's pool size: one connection per cursor
    return _build(saver)


PATCHES: dict[str, list[tuple[Any, str, Any]]] = {
    "no prune": [(chat_graph, "run", _run_without_prune)],
    "no pool check": [(checkpointer, "saver_context", _saver_without_check)],
    "one delta": [(chat_graph, "_DELTA_WORDS", 10**9)],
    "no saver lock": [(chat_graph, "build", _build_without_lock)],
}
VARIANTS = ["as is", *PATCHES, "all four"]


@contextlib.contextmanager
def patched(variant: str) -> Iterator[None]:
    chosen = [p for name, ps in PATCHES.items() if variant in (name, "all four") for p in ps]
    saved = [(target, name, getattr(target, name)) for target, name, _ in chosen]
    for target, name, value in chosen:
        setattr(target, name, value)
    try:
        yield
    finally:
        for target, name, value in saved:
            setattr(target, name, value)


async def one_pass(
    look: _lookout.Lookout, pages: _pages.Server, concurrency: int, meter: _procs.Meter
) -> tuple[float, float, float]:
    """(CPU s of this process, of Postgres + Redis, wall s) of one run of every watch."""
    edited = random.sample(range(pages.count), max(1, pages.count // 10))
    await asyncio.to_thread(pages.change, edited)
    gate = asyncio.Semaphore(concurrency)
    async with look.in_process() as opened:

        async def one(watch: Any) -> None:
            async with gate:
                _, status = await look.run_now(opened, watch)
                assert status == "succeeded", status

        meter.start()
        cpu, started = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(watch) for watch in look.watches))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - started
        return cpu, meter.stop()[0], wall


async def run(args: argparse.Namespace, dsn: str, redis_url: str, pages: _pages.Server) -> None:
    look = _lookout.Lookout(dsn, redis_url)
    async with look.opened():
        await look.seed([pages.url(index) for index in range(args.watches)])
        meter = _procs.Meter(await look.service_pids())
        for _ in range(2):  # first runs (nothing to diff), then one steady pass to warm up
            await one_pass(look, pages, args.concurrency, meter)
        cpu: dict[str, list[tuple[float, float, float]]] = {variant: [] for variant in VARIANTS}
        for number in range(args.rounds):
            # Each round starts with another variant: a drift in load spreads over all of them.
            for variant in VARIANTS[number:] + VARIANTS[:number]:
                with patched(variant):
                    cpu[variant].append(await one_pass(look, pages, args.concurrency, meter))
    report(cpu, args.watches)


def report(cpu: dict[str, list[tuple[float, float, float]]], watches: int) -> None:
    def per_turn(values: Any) -> float:
        return float(1000 * statistics.median(values) / watches)

    base = per_turn(own + served for own, served, _ in cpu["as is"])
    base_wall = per_turn(wall for *_, wall in cpu["as is"])
    for variant, runs in cpu.items():
        total = per_turn(own + served for own, served, _ in runs)
        own, served, wall = (per_turn(side) for side in zip(*runs, strict=True))
        _out.figure(variant, f"CPU {total:.1f} ms a turn = {total / base:.2f}x (turn process "
                    f"{own:.1f}, Postgres + Redis {served:.1f}); wall {wall:.1f} ms a turn = "
                    f"{wall / base_wall:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watches", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    _out.figure("machine", _out.machine())
    pages = _pages.Server(args.watches)
    try:
        with services.backing() as (dsn, redis_url):
            asyncio.run(run(args, dsn, redis_url, pages))
    finally:
        pages.stop()


if __name__ == "__main__":
    main()
