"""The per-day half of bench/versus.py: both tools as a user starts them, every process counted,
on realistic pages with page latency; cycle and idle cost, memory, storage, detection.

Lookout runs as `lookout dev` (the embedded default: the supervisor, web and worker from the
Procfile, the worker sending the periodic ticks, with its default worker processes and threads),
on the bench's own Postgres and Redis (DATABASE_URL / REDIS_URL set, which `lookout dev` honours
instead of starting its own), and those two are counted as Lookout's: every process in the dev
tree, the postmaster with its backends, redis-server. changedetection.io runs as
`changedetection.py` (one process, its default fetch workers), its scheduler paused so checks run
when a cycle is triggered.

The pages are the realistic cases (bench/_realistic.py: real articles, real edits inside the
article and noise outside it), each answered after --latency-ms. A warm-up cycle sees every page;
then each measured cycle flips every page between its before and after versions, so each edit is
a change to report every cycle and each noise case a change to ignore. A Lookout cycle is what
the scheduler's minute does (every watch due, dispatched from this process, whose CPU is
counted), until every run finished. Then both tools idle side by side for --idle-s, metered.

Per day, for 1,000 hourly watches: 24 cycles of 1,000 pages (the measured cycle's CPU scaled
by 1,000 / pages) plus the measured idle CPU rate for the rest of the day. Idle is measured with
the cases' count of watches, not 1,000 (said beside the figure). Storage per watch after
--checks checks is bench/_storage.py's, for both tools on the same page plan.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _cdio
import _lookout
import _out
import _pages
import _procs
import _realistic
import _storage

from lookout import cli
from lookout.settings import Settings

DAY_S = 86_400
WATCHES = 1_000
CPU_DAY_TARGET = 1.0  # Lookout's CPU per day against changedetection.io's: at most the same


@dataclasses.dataclass
class Side:
    """One tool's figures over the run."""

    cycles: list[tuple[float, float, int, set[int]]] = dataclasses.field(default_factory=list)
    idle_cpu: float = 0.0  # CPU seconds over the idle window
    idle_pss: int = 0
    processes: int = 0

    def cpu(self) -> float:  # the median cycle's (the upper one of an even count)
        return sorted(cycle[1] for cycle in self.cycles)[len(self.cycles) // 2]

    def wall(self) -> float:
        return sorted(cycle[0] for cycle in self.cycles)[len(self.cycles) // 2]

    def peak(self) -> int:
        return max(cycle[2] for cycle in self.cycles)


@contextlib.contextmanager
def lookout_dev(env: dict[str, str], port: int, limit_s: float = 180) -> Iterator[int]:
    """`lookout dev` in a directory of its own, until /readyz answers 200; yields its pid."""
    home = Path(tempfile.mkdtemp(prefix="lookout-bench-dev-"))
    log = (home / "dev.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "lookout.cli", "dev"], cwd=home, stdout=log,
        stderr=subprocess.STDOUT, env={**env, "PORT": str(port)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + limit_s
        while not _ready(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"lookout dev not ready:\n{(home / 'dev.log').read_text()}")
            time.sleep(0.2)
        yield process.pid
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(90)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


# What a process of the `lookout dev` tree is, by its command line (first match).
_ROLES = (
    ("lookout dev-serve", "web + worker"),
    ("lookout.cli dev", "supervisor"),
    ("lookout dev", "supervisor"),
    ("/bin/sh -c", "shell"),
    ("lookout web", "web"),
    ("dramatiq", "worker"),
    ("lookout scheduler", "scheduler"),
)


def given(dev_pid: int, env: dict[str, str]) -> str:
    """What Lookout was given: its processes (by command) and the worker's processes x threads."""
    names: dict[str, int] = {}
    for pid in _procs.tree([dev_pid]):
        with contextlib.suppress(OSError):
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            label = next((name for mark, name in _ROLES if mark in line), "other")
            names[label] = names.get(label, 0) + 1
    shown = ", ".join(f"{count} {name}" for name, count in sorted(names.items()))
    if "web + worker" in names:  # `lookout dev` with one worker: in the web process
        threads = cli.worker_size(Settings.from_env(env), processes=1)[1]
        return (f"{sum(names.values())} processes ({shown}); worker in the web process x "
                f"{threads} threads")  # fmt: skip
    processes, threads = cli.worker_size(Settings.from_env(env))
    return (f"{sum(names.values())} processes ({shown}); worker {processes} "
            f"processes x {threads} threads")  # fmt: skip


async def cycles(
    look: _lookout.Lookout, cdio: _cdio.ChangeDetection, served: _realistic.Served,
    ids: list[uuid.UUID], roots: list[int], count: int,
) -> tuple[Side, Side]:  # fmt: skip
    ours, theirs = Side(), Side()
    await look.cycle(only=ids)  # warm-up: first sight of every page
    await asyncio.to_thread(cdio.cycle)
    for number in range(count):
        served.after = not served.after
        meter = _procs.Meter(roots).start()
        cycle = await look.cycle(only=ids)
        cpu, peak = meter.stop()
        index = {watch: n for n, watch in enumerate(ids)}
        found = {index[w] for w, said in cycle.outcomes.items() if said == "changed"}
        ours.cycles.append((cycle.wall_s, cpu + cycle.dispatched.cpu_s, peak, found))
        cdio_meter = _procs.Meter([cdio.process.pid])
        wall, theirs_found = await asyncio.to_thread(cdio.cycle, cdio_meter)
        theirs.cycles.append((wall, cdio_meter.cpu, cdio_meter.peak, theirs_found))
        _out.note(f"cycle {number + 1}: lookout {cycle.wall_s:.1f} s {ours.cycles[-1][1]:.1f} "
                  f"CPU s; cdio {wall:.1f} s {cdio_meter.cpu:.1f} CPU s")  # fmt: skip
    return ours, theirs


def idle(roots: list[int], cdio_pid: int, seconds: float) -> tuple[tuple[float, int], ...]:
    """(CPU seconds, PSS at the end) of each tool over the same idle window."""
    time.sleep(5)  # what the last cycle left (a last write, a sweep) settles first
    meters = [_procs.Meter(roots, interval_s=seconds).start(),
              _procs.Meter([cdio_pid], interval_s=seconds).start()]  # fmt: skip
    time.sleep(seconds)
    out = []
    for meter in meters:
        cpu, _ = meter.stop()
        out.append((cpu, _procs.memory_bytes(meter.roots)[1]))
    return tuple(out)


def per_day(side: Side, pages: int, idle_s: float) -> float:
    """CPU seconds a day for WATCHES hourly watches."""
    scale = WATCHES / pages
    busy_s = 24 * side.wall() * scale
    return 24 * side.cpu() * scale + side.idle_cpu / idle_s * max(0.0, DAY_S - busy_s)


def cdio_storage(python: Path, checks: int, watches: int) -> float:
    """changedetection.io's datastore bytes per watch after `checks` checks of the page plan."""
    from tests.corpus import mutations

    every = mutations.page_ids()
    articles = every[:: max(1, len(every) // watches)][:watches]
    plans = [_storage.schedule(list(mutations.cases([page])), checks) for page in articles]
    versions = _storage.Versions()
    port, loop, thread = _storage.serve(versions)
    cdio = _cdio.ChangeDetection(python)
    try:
        cdio.watch([f"http://127.0.0.1:{port}/w/{n}" for n in range(watches)])
        before = _du(cdio.datastore)
        for check in range(checks):
            for n in range(watches):
                versions.html[n] = plans[n][check][0]
            cdio.cycle()
        time.sleep(2)  # its datastore is written behind, every few seconds
        used = _du(cdio.datastore) - before
    finally:
        cdio.stop()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    return used / watches


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


async def run(args: Any, dsn: str, redis_url: str, python: Path) -> bool:
    from tests.corpus import mutations

    cases = list(mutations.cases(mutations.page_ids()[: args.day_pages]))
    served = _realistic.Served(cases, latency_s=args.latency_ms / 1000)
    urls = [served.url(index) for index in range(len(cases))]
    look = _lookout.Lookout(dsn, redis_url)
    cdio = _cdio.ChangeDetection(python)
    port = _pages.free_port()
    try:
        cdio.watch(urls)
        async with look.opened():
            ids = await look.seed(urls)
            with lookout_dev(look.env, port) as dev_pid:
                services = await look.service_pids()
                roots = [dev_pid, *services]
                _out.figure("lookout given", given(dev_pid, look.env) + "; + postgres, redis")
                _out.figure("cdio given", "1 process, FETCH_WORKERS default (5 threads)")
                ours, theirs = await cycles(look, cdio, served, ids, roots, args.day_cycles)
                (
                    (ours.idle_cpu, ours.idle_pss),
                    (theirs.idle_cpu, theirs.idle_pss),
                ) = await asyncio.to_thread(idle, roots, cdio.process.pid, args.idle_s)
    finally:
        cdio.stop()
        served.stop()
    ok = summary(cases, ours, theirs, args)
    return await storage(args, python, dsn, redis_url) and ok


def summary(cases: list[Any], ours: Side, theirs: Side, args: Any) -> bool:
    pages = len(cases)
    day = [per_day(side, pages, args.idle_s) for side in (ours, theirs)]
    ratio = day[0] / day[1]
    _out.figure(f"CPU per day, {WATCHES} hourly watches", f"{day[0] / 3600:.2f} / "
                f"{day[1] / 3600:.2f} CPU hours (lookout / cdio) = {ratio:.2f}x | target <= "
                f"{CPU_DAY_TARGET}x: {_out.verdict(ratio <= CPU_DAY_TARGET)}")  # fmt: skip
    scale = WATCHES / pages
    _out.figure(f"cycle of {pages} pages, median", f"{ours.wall():.1f} s {ours.cpu():.1f} CPU s"
                f" / {theirs.wall():.1f} s {theirs.cpu():.1f} CPU s = "
                f"{ours.cpu() / theirs.cpu():.2f}x CPU (x{scale:.1f} for {WATCHES})")  # fmt: skip
    turn = 1000 * ours.cpu() / pages, 1000 * theirs.cpu() / pages
    _out.figure("CPU ms per check (lookout / cdio)", f"{turn[0]:.1f} / {turn[1]:.1f} = "
                f"{turn[0] / turn[1]:.2f}x | target <= 0.5x: "
                f"{_out.verdict(turn[0] / turn[1] <= 0.5)}")  # fmt: skip
    rate = [100 * side.idle_cpu / args.idle_s for side in (ours, theirs)]
    _out.figure(f"idle CPU, {pages} watches, {args.idle_s:.0f} s", f"{rate[0]:.2f} % / "
                f"{rate[1]:.2f} % of a core")  # fmt: skip
    _out.figure("PSS peak (cycle) / idle, lookout", f"{_out.mib(ours.peak())} / "
                f"{_out.mib(ours.idle_pss)}")  # fmt: skip
    _out.figure("PSS peak (cycle) / idle, cdio", f"{_out.mib(theirs.peak())} / "
                f"{_out.mib(theirs.idle_pss)}")  # fmt: skip
    for label, side in (("lookout", ours), ("cdio", theirs)):
        found = [_realistic.score(cases, cycle[3]) for cycle in side.cycles]
        reported = sum(f["reported"] for f in found)
        false = sum(sum(f["false"].values()) for f in found)
        _out.figure(f"{label} detection, {len(found)} cycles", f"{reported} / "
                    f"{sum(f['edits'] for f in found)} edits reported, {false} false changes "
                    f"of {sum(f['noise'] for f in found)} noise pages")  # fmt: skip
    return ratio <= CPU_DAY_TARGET


async def storage(args: Any, python: Path, dsn: str, redis_url: str) -> bool:
    """Storage per watch after --checks checks of the same page plan, both tools."""
    stored = await _storage.measure(dsn, redis_url, args.storage_watches, args.checks)
    ours = sum(_storage.per_watch(stored["swept"]).values())
    theirs = await asyncio.to_thread(cdio_storage, python, args.checks, args.storage_watches)
    _out.figure(f"storage per watch, {args.checks} checks", f"{_out.sized(ours)} / "
                f"{_out.sized(theirs)} (lookout / cdio) = {ours / max(theirs, 1):.2f}x | "
                f"lookout target <= 200 KiB: {_out.verdict(ours <= 200 * 1024)}")  # fmt: skip
    _out.note(f"lookout, {args.storage_watches} watches: {stored['said']}")
    return ours <= 200 * 1024
