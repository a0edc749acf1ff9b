"""Lookout's cost of scale: the same check cycle at several numbers of watches.

For each size: a fresh database on the same server, SIZE watches (one page each), `lookout
worker` with default counts, CYCLES cycles (10 % of the pages edited before each one after the
first). Recorded: dispatch time, the dispatcher's CPU and cycle time of every cycle, and the
database's growth past its empty (migrated) size, per watch. Linear means the cost per watch
does not rise with the number of watches: between two sizes it may rise by at most TOLERANCE
(machine noise).

Dispatch time is held to that from ALONE dispatches of the same watches with no worker
running, in a database of their own. Within a cycle the workers start on the first batch sent
(~0.1 s in) and share the 2 cores with the dispatcher: a 1,000-watch dispatch is over before
they wake, a 10,000-watch one runs beside 16 busy turn threads for most of its time, so its
time there measures that sharing more than the dispatcher. It is printed, with no target; the
dispatcher's CPU within cycles, and the cycle times, keep theirs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
import statistics
import urllib.parse

import _lookout
import _out
import _pages
import asyncpg
import redis

TOLERANCE = 1.25
ALONE = 3  # dispatches a size with no worker running
REPORT_AT = 50  # cycles: the issue asks for Postgres size per watch after 50 cycles


@dataclasses.dataclass(frozen=True)
class Size:
    watches: int
    alone_s: list[float]  # dispatch time with no worker running
    dispatch_s: list[float]  # dispatch time within each cycle, beside the workers
    dispatch_cpu_s: list[float]  # the dispatcher's own CPU: its cost, whatever else runs
    cycle_s: list[float]
    bytes_after: list[int]  # database growth after each cycle

    def per_watch(self, values: list[float]) -> float:
        return statistics.median(values) / self.watches

    @property
    def steady_s(self) -> list[float]:
        """Cycles after the first (which has nothing to compare with)."""
        return self.cycle_s[1:]

    def bytes_per_watch_at(self, cycles: int) -> tuple[float, bool] | None:
        """(bytes per watch after `cycles` cycles, whether extrapolated from the per-cycle
        growth), or None with too few cycles to extrapolate from."""
        done = len(self.bytes_after)
        if done >= cycles:
            return self.bytes_after[cycles - 1] / self.watches, False
        if done < 2:
            return None
        slope = (self.bytes_after[-1] - self.bytes_after[0]) / (done - 1)
        return (self.bytes_after[-1] + slope * (cycles - done)) / self.watches, True


def plan(text: str) -> list[tuple[int, int]]:
    """'100:50,1000:5' -> [(100, 50), (1000, 5)]."""
    pairs = (item.split(":") for item in text.split(",") if item)
    return [(int(size), int(cycles)) for size, cycles in pairs]


def database_url(dsn: str, name: str) -> str:
    return urllib.parse.urlsplit(dsn)._replace(path=f"/{name}").geturl()


async def fresh_database(dsn: str, name: str) -> str:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return database_url(dsn, name)


async def dispatch_alone(size: int, dsn: str, redis_url: str, pages: _pages.Server) -> list[float]:
    """Seconds of ALONE dispatches of `size` due watches with no worker running, in a database
    of their own (the runs they leave would count in the cycles' Postgres size)."""
    look = _lookout.Lookout(await fresh_database(dsn, f"scale_{size}_alone"), redis_url)
    seconds = []
    async with look.opened():
        await look.seed([pages.url(index) for index in range(size)])
        for _ in range(ALONE):
            await look.make_due()
            seconds.append((await look.dispatch()).total_s)
            await look.purge()
    return seconds


async def measure(size: int, cycles: int, dsn: str, redis_url: str, pages: _pages.Server) -> Size:
    alone = await dispatch_alone(size, dsn, redis_url, pages)
    redis.Redis.from_url(redis_url).flushdb()  # no stream or queue left from before
    look = _lookout.Lookout(await fresh_database(dsn, f"scale_{size}"), redis_url)
    result = Size(size, alone, [], [], [], [])
    async with look.opened():
        empty = await look.database_bytes()
        await look.seed([pages.url(index) for index in range(size)])
        with _lookout.workers(look.env):
            for number in range(cycles):
                if number:
                    edited = random.Random(number).sample(range(size), max(1, size // 10))
                    await asyncio.to_thread(pages.change, edited)
                cycle = await look.cycle()
                result.dispatch_s.append(cycle.dispatched.total_s)
                result.dispatch_cpu_s.append(cycle.dispatched.cpu_s)
                result.cycle_s.append(cycle.wall_s)
                result.bytes_after.append(await look.database_bytes() - empty)
        largest = await look.largest_tables()
    _out.figure(f"{size:,} watches x {cycles} cycles", describe(result))
    _out.note(
        "largest tables: " + ", ".join(f"{name} {_out.sized(size)}" for name, size in largest)
    )
    return result


def describe(size: Size) -> str:
    steady = f", later cycles {statistics.median(size.steady_s):.1f} s" if size.steady_s else ""
    at = size.bytes_per_watch_at(REPORT_AT)
    at_report = (
        f"{at[0]:,.0f} B/watch at {REPORT_AT}" + (" (extrapolated)" if at[1] else "")
        if at
        else f"too few cycles to extrapolate to {REPORT_AT}"
    )
    return (
        f"dispatch alone {statistics.median(size.alone_s):.2f} s, in cycles "
        f"{statistics.median(size.dispatch_s):.2f} s "
        f"({statistics.median(size.dispatch_cpu_s):.2f} CPU s); first cycle "
        f"{size.cycle_s[0]:.1f} s{steady}; Postgres {size.bytes_after[-1] / size.watches:,.0f} "
        f"B/watch after {len(size.cycle_s)} cycles, {at_report}"
    )


def ratios(sizes: list[Size], cost: list[float]) -> tuple[list[float], str]:
    """(cost per watch of each size over the size before it, those ratios as text)."""
    rises = [later / earlier for earlier, later in itertools.pairwise(cost)]
    steps = ", ".join(
        f"{a.watches:,}->{b.watches:,}: {rise:.2f}x"
        for (a, b), rise in zip(itertools.pairwise(sizes), rises, strict=True)
    )
    return rises, steps


def linear(label: str, sizes: list[Size], cost: list[float]) -> bool:
    """Cost per watch between consecutive sizes rises by at most TOLERANCE."""
    rises, steps = ratios(sizes, cost)
    ok = all(rise <= TOLERANCE for rise in rises)
    _out.figure(f"{label} per watch", f"{steps} | target <= {TOLERANCE}x: {_out.verdict(ok)}")
    return ok


async def run(sizes: list[tuple[int, int]], dsn: str, redis_url: str) -> bool:
    pages = _pages.Server(max(size for size, _ in sizes))
    try:
        done = [await measure(size, cycles, dsn, redis_url, pages) for size, cycles in sizes]
    finally:
        pages.stop()
    ok = linear("dispatch time alone", done, [s.per_watch(s.alone_s) for s in done])
    _out.figure(
        "dispatch time in cycles per watch",
        ratios(done, [s.per_watch(s.dispatch_s) for s in done])[1]
        + " | no target: shares the cores with the workers it feeds",
    )
    ok &= linear("dispatcher CPU", done, [s.per_watch(s.dispatch_cpu_s) for s in done])
    ok &= linear("first-cycle time", done, [s.cycle_s[0] / s.watches for s in done])
    steady = [s for s in done if s.steady_s]
    if len(steady) > 1:
        ok &= linear("later-cycle time", steady, [s.per_watch(s.steady_s) for s in steady])
    ok &= linear("Postgres bytes (1 cycle)", done, [s.bytes_after[0] / s.watches for s in done])
    ran = [s for s in done if len(s.bytes_after) >= REPORT_AT]  # measured, not extrapolated
    if len(ran) > 1:
        ok &= linear(
            f"Postgres bytes ({REPORT_AT} cycles)", ran,
            [s.bytes_after[REPORT_AT - 1] / s.watches for s in ran],
        )  # fmt: skip
    return ok
