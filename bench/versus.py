"""Benchmark: Lookout side by side with changedetection.io, then Lookout's cost of scale.

    .venv/bin/python bench/versus.py [--pages 1000] [--cycles 5]
        [--scale 100:50,1000:50,10000:3] [--skip-scale] [--real 20] [--only-real] [--check]

Side by side, same machine, same run: one local server process serves --pages pages; each is
watched once by both systems. changedetection.io (pip-installed into .bench/changedetection on
first use) runs with its plain HTTP fetcher and default workers, its own scheduler paused; a
cycle is `recheck_all` until its queue and running checks are empty. Lookout runs `lookout
worker` (default processes x threads, rule planner) on throwaway Postgres + Redis; a cycle is
every watch made due, `dispatch_due_watches`' work, until every run is finished. After one
warm-up cycle (first sight of every page), each measured cycle edits 10 % of the pages, then
runs both systems one after the other (order alternating). Per cycle: wall time, CPU seconds
and peak memory (summed PSS and summed RSS) of each system's processes, from /proc: for Lookout
the worker processes, the postmaster with all its backends, redis-server (both serve only
Lookout here) and the dispatcher's own CPU; for changedetection.io its one process.
Detection: Lookout's run answer says "Changed since" or "No change since"; changedetection.io's
`last_changed` moves.
Targets: Lookout's cycle >= 2x faster at no more CPU, 0 false positives, 0 misses.

Realistic (--real PAGES, bench/_realistic.py): real article pages with real edits inside the
article and noise in the markup or outside it, the same for both tools; each tool's reported and
missed edits and false changes, beside its cycle time and CPU.

Per day (--day, bench/_day.py; --only-day runs it alone): both tools as a user starts them
(`lookout dev` with every process counted; `changedetection.py`), on the realistic cases with
--latency-ms page latency: cycle CPU x 24 + idle CPU over a measured --idle-s window for 1,000
hourly watches, peak and idle PSS, storage per watch after --checks checks, detection.

Cost of scale (--scale SIZE:CYCLES,...): for each size, a fresh database, SIZE watches, CYCLES
cycles (10 % of pages edited from the second on): dispatch time (alone, with no worker
running, and within the cycles), the dispatcher's CPU, cycle time, and Postgres bytes per
watch. Target: each cost grows linearly with the watches, not worse (bench/_scale.py says why
dispatch time within the cycles is printed with no target).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cdio
import _day
import _lookout
import _out
import _pages
import _procs
import _realistic
import _scale
import services

SPEED_TARGET = 2.0
CPU_TARGET = 1.0


@dataclasses.dataclass(frozen=True)
class Result:
    wall_s: float
    cpu_s: float
    peak: int
    detected: set[int]  # pages reported changed
    changed: set[int]  # pages edited before the cycle
    parts: dict[str, float] = dataclasses.field(default_factory=dict)  # CPU by process group
    calls: dict[str, float] = dataclasses.field(default_factory=dict)  # round trips per turn
    peak_rss: int = 0  # summed RSS (shared pages counted once a process)

    @property
    def false_positives(self) -> int:
        return len(self.detected - self.changed)

    @property
    def misses(self) -> int:
        return len(self.changed - self.detected)


async def lookout_cycle(
    look: _lookout.Lookout, groups: dict[str, list[int]], changed: set[int]
) -> Result:
    before = await look.counters()
    meters = {name: _procs.Meter(pids).start() for name, pids in groups.items()}
    cycle = await look.cycle()
    used = {name: meter.stop() for name, meter in meters.items()}
    peak_rss = sum(meter.peak_rss for meter in meters.values())
    after = await look.counters()
    parts = {name: cpu for name, (cpu, _) in used.items()}
    parts["dispatcher"] = cycle.dispatched.cpu_s
    turns = len(cycle.outcomes)
    calls = {
        "pg_xacts": (after[0] - before[0]) / turns,
        "redis_cmds": (after[1] - before[1]) / turns,
    }
    detected = {look.watches[w] for w, verdict in cycle.outcomes.items() if verdict == "changed"}
    failed = sum(verdict.startswith("failed") for verdict in cycle.outcomes.values())
    if failed:
        _out.note(f"lookout: {failed} runs failed")
    return Result(
        cycle.wall_s, sum(parts.values()), sum(peak for _, peak in used.values()), detected,
        changed, parts, calls, peak_rss,
    )  # fmt: skip


def cdio_cycle(cdio: _cdio.ChangeDetection, changed: set[int]) -> Result:
    meter = _procs.Meter([cdio.process.pid])
    wall, detected = cdio.cycle(meter)
    return Result(wall, meter.cpu, meter.peak, detected, changed, peak_rss=meter.peak_rss)


async def cycles(
    look: _lookout.Lookout, cdio: _cdio.ChangeDetection, pages: _pages.Server, count: int,
    groups: dict[str, list[int]],
) -> dict[str, list[Result]]:  # fmt: skip
    results: dict[str, list[Result]] = {"lookout": [], "changedetection.io": []}
    await look.cycle()  # warm-up: first sight of every page, nothing to compare with yet
    await asyncio.to_thread(cdio.cycle)
    for number in range(count):
        changed = set(random.Random(number).sample(range(pages.count), pages.count // 10))
        await asyncio.to_thread(pages.change, sorted(changed))
        for side in ("lookout", "changedetection.io")[:: 1 if number % 2 == 0 else -1]:
            if side == "lookout":
                result = await lookout_cycle(look, groups, changed)
            else:
                result = await asyncio.to_thread(cdio_cycle, cdio, changed)
            results[side].append(result)
            _out.note(f"cycle {number + 1} {side}: {result.wall_s:.1f} s, {result.cpu_s:.1f} "
                      f"CPU s, {_out.mib(result.peak)}, {result.false_positives} false "
                      f"positives, {result.misses} misses")  # fmt: skip
    return results


def summary(results: dict[str, list[Result]], pages: int) -> bool:
    ours, theirs = results["lookout"], results["changedetection.io"]
    wall = [statistics.median(r.wall_s for r in side) for side in (ours, theirs)]
    cpu = [statistics.median(r.cpu_s for r in side) for side in (ours, theirs)]
    peak = [max(r.peak for r in side) for side in (ours, theirs)]
    rss = [max(r.peak_rss for r in side) for side in (ours, theirs)]
    speed, cpu_ratio = wall[1] / wall[0], cpu[0] / cpu[1]
    wrong = sum(r.false_positives for r in ours), sum(r.misses for r in ours)
    _out.figure("cycle wall, median (lookout / cdio)", f"{wall[0]:.1f} s / {wall[1]:.1f} s = "
                f"{speed:.2f}x faster | target >= {SPEED_TARGET}x: "
                f"{_out.verdict(speed >= SPEED_TARGET)}")  # fmt: skip
    _out.figure("cycle CPU s, median (lookout / cdio)", f"{cpu[0]:.1f} / {cpu[1]:.1f} = "
                f"{cpu_ratio:.2f}x | target <= {CPU_TARGET}x: "
                f"{_out.verdict(cpu_ratio <= CPU_TARGET)}")  # fmt: skip
    _out.figure("peak PSS, summed (lookout / cdio)", f"{_out.mib(peak[0])} / "
                f"{_out.mib(peak[1])} = {peak[0] / peak[1]:.2f}x (no target)")  # fmt: skip
    _out.figure("peak RSS, summed (lookout / cdio)", f"{_out.mib(rss[0])} / {_out.mib(rss[1])} = "
                f"{rss[0] / rss[1]:.2f}x (no target; shared pages once a process)")  # fmt: skip
    _out.figure("lookout detection, all cycles", f"{wrong[0]} false positives, {wrong[1]} "
                f"misses | target 0 and 0: {_out.verdict(wrong == (0, 0))}")  # fmt: skip
    _out.figure("cdio detection, all cycles", f"{sum(r.false_positives for r in theirs)} false "
                f"positives, {sum(r.misses for r in theirs)} misses")  # fmt: skip
    breakdown(ours, pages)
    _out.note(f"changedetection.io CPU ms per page: {1000 * cpu[1] / pages:.1f}")
    return speed >= SPEED_TARGET and cpu_ratio <= CPU_TARGET and wrong == (0, 0)


def breakdown(ours: list[Result], pages: int) -> None:
    """Where Lookout's CPU goes, per turn: what a fix has to cut."""
    parts = {name: statistics.median(r.parts[name] for r in ours) for name in ours[0].parts}
    calls = {name: statistics.median(r.calls[name] for r in ours) for name in ours[0].calls}
    _out.note("lookout CPU ms per turn: " + ", ".join(
        f"{name} {1000 * cpu / pages:.1f}" for name, cpu in parts.items()))  # fmt: skip
    _out.note(f"lookout round trips per turn: {calls['pg_xacts']:.1f} Postgres transactions, "
              f"{calls['redis_cmds']:.1f} Redis commands")  # fmt: skip


async def side_by_side(args: argparse.Namespace, dsn: str, redis_url: str) -> bool:
    try:
        python = _cdio.ensure_installed()
    except (OSError, subprocess.CalledProcessError) as exc:
        _out.figure("side by side", f"not run: changedetection.io could not be installed ({exc})"
                    " | target: MISSED")  # fmt: skip
        return False
    _out.figure("peer", f"changedetection.io {_cdio.version(python)}, plain HTTP fetcher, "
                "default workers")  # fmt: skip
    pages = _pages.Server(args.pages)
    urls = [pages.url(index) for index in range(args.pages)]
    look = _lookout.Lookout(dsn, redis_url)
    cdio = _cdio.ChangeDetection(python)
    try:
        cdio.watch(urls)
        async with look.opened():
            await look.seed(urls)
            with _lookout.workers(look.env) as worker:
                postgres, redis_server = await look.service_pids()
                groups = {"workers": [worker.pid], "postgres": [postgres],
                          "redis": [redis_server]}  # fmt: skip
                results = await cycles(look, cdio, pages, args.cycles, groups)
    finally:
        cdio.stop()
        pages.stop()
    return summary(results, args.pages)


async def realistic(args: argparse.Namespace, dsn: str, redis_url: str) -> bool:
    """The mutation corpus's real pages, edits and noise for both tools (bench/_realistic.py)."""
    try:
        python = _cdio.ensure_installed()
    except (OSError, subprocess.CalledProcessError) as exc:
        _out.figure("realistic", f"not run: changedetection.io could not be installed ({exc})")
        return False
    return await _realistic.run(dsn, redis_url, python, args.real)


async def day(args: argparse.Namespace, dsn: str, redis_url: str) -> bool:
    """Both tools as a user starts them, per cycle and per day (bench/_day.py)."""
    try:
        python = _cdio.ensure_installed()
    except (OSError, subprocess.CalledProcessError) as exc:
        _out.figure("per day", f"not run: changedetection.io could not be installed ({exc})")
        return False
    return await _day.run(args, dsn, redis_url, python)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--cycles", type=int, default=5, help="measured cycles (after warm-up)")
    parser.add_argument("--scale", default="100:50,1000:50,10000:3", help="SIZE:CYCLES,...")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--real", type=int, default=20, help="real article pages (realistic)")
    parser.add_argument("--only-real", action="store_true", help="only the realistic cases")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--day", action="store_true", help="the per-day comparison too")
    parser.add_argument("--only-day", action="store_true", help="only the per-day comparison")
    parser.add_argument("--day-pages", type=int, default=36, help="articles (x ~28 cases)")
    parser.add_argument("--day-cycles", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=60.0)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--checks", type=int, default=50, help="for storage per watch")
    parser.add_argument("--storage-watches", type=int, default=4)
    parser.add_argument("--only-storage", action="store_true", help="only storage per watch")
    args = parser.parse_args()
    _out.figure("machine", _out.machine())
    with services.backing() as (dsn, redis_url):
        if args.only_storage:
            python = _cdio.ensure_installed()
            return 0 if asyncio.run(_day.storage(args, python, dsn, redis_url)) else 1
        if args.only_day:
            return 0 if asyncio.run(day(args, dsn, redis_url)) or not args.check else 1
        ok = True if args.only_real else asyncio.run(side_by_side(args, dsn, redis_url))
        if args.day:
            ok &= asyncio.run(day(args, dsn, redis_url))
        if args.real:
            ok &= asyncio.run(realistic(args, dsn, redis_url))
        if not args.skip_scale and not args.only_real:
            ok &= asyncio.run(_scale.run(_scale.plan(args.scale), dsn, redis_url))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
