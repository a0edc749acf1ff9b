"""Cold start and idle memory of Lookout's processes, each against its target (issue #30).

Printed, in one run:
- `import lookout.app` (the web process's imports) and `import lookout.worker, lookout.actors`
  (the worker's), median wall time of `--imports` fresh interpreters each, against a bare
  `import aiohttp` measured the same way, as a ratio;
- `lookout dev` to `/readyz` 200 on existing data (a data directory a first `lookout dev`
  created: cluster, migrations, demo account), target <= 3 s;
- RSS of the web process and of each worker process, idle, `--settle-s` after ready, target
  <= 120 MiB each (the scheduler and the supervisor are printed, not judged here).

    .venv/bin/python bench/startup.py [--imports 5] [--starts 2] [--settle-s 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import footprint

TARGET_COLD_START_S = footprint.TARGET_COLD_START_S
TARGET_PROCESS_RSS_MIB = footprint.TARGET_PROCESS_RSS_MIB
MIB = 1024 * 1024
# Settings the modules read at import; nothing is connected to.
IMPORT_ENV = {
    "DATABASE_URL": "postgresql://lookout@127.0.0.1:1/lookout",
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "LOOKOUT_SECRET_KEY": "bench-secret-key-bench-secret-key",
    "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:8000",
}


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _import_s(modules: str, runs: int) -> tuple[float, float]:
    """Median wall time and CPU seconds of a fresh interpreter importing `modules` (interpreter
    start included). CPU is what a loaded machine changes least."""
    env = {**os.environ, **IMPORT_ENV}
    walls, cpus = [], []
    for _ in range(runs):
        started, cpu = time.perf_counter(), _children_cpu_s()
        subprocess.run([sys.executable, "-c", f"import {modules}"], env=env, check=True)
        walls.append(time.perf_counter() - started)
        cpus.append(_children_cpu_s() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _imports(runs: int) -> None:
    bare, bare_cpu = _import_s("aiohttp", runs)
    for label, modules in (("web", "lookout.app"), ("worker", "lookout.worker, lookout.actors")):
        took, cpu = _import_s(modules, runs)
        print(f"import {modules} [{label}]: {took:.2f} s wall, {cpu:.2f} s CPU; a bare "
              f"`import aiohttp` {bare:.2f} s wall, {bare_cpu:.2f} s CPU: {took / bare:.2f}x "
              f"wall, {cpu / bare_cpu:.2f}x CPU", flush=True)  # fmt: skip


def _role(label: str) -> str:
    """What a process is, from its label: "<pid> <command line>"."""
    label = label.partition(" ")[2]
    if label.startswith("sh "):
        return "shell"
    if "lookout web" in label:
        return "web"
    if "dramatiq" in label and "lookout.worker" in label:
        return "worker"
    if "periodiq" in label or "lookout scheduler" in label:
        return "scheduler"
    return "other"


def _memory(dev: footprint.Dev) -> bool:
    """Print every Python process's RSS; True when web and every worker are within target."""
    within = True
    for label, rss, pss in footprint._memory(dev.roots()):
        if "postgres" in label or "redis" in label:
            continue
        role = _role(label)
        judged = role in ("web", "worker")
        ok = rss / MIB <= TARGET_PROCESS_RSS_MIB
        within &= ok or not judged
        verdict = f"(target <= {TARGET_PROCESS_RSS_MIB} MiB: {'ok' if ok else 'OVER'})"
        print(f"  {role:9s} {rss / MIB:6.1f} MiB RSS {pss / MIB:6.1f} MiB PSS  "
              f"{verdict if judged else '':32s} {label}")  # fmt: skip
    return within


def _run(args: argparse.Namespace, workdir: Path) -> int:
    _imports(args.imports)
    first = footprint.Dev(workdir)  # creates the cluster and the demo account: not measured
    print(f"first lookout dev (creates the data): ready in {first.ready_s:.2f} s", flush=True)
    first.stop()
    starts, within = [], True
    for number in range(args.starts):
        dev = footprint.Dev(workdir)
        try:
            starts.append(dev.ready_s)
            print(f"lookout dev on existing data #{number + 1}: /readyz 200 in {dev.ready_s:.2f} s")
            if number == args.starts - 1:
                time.sleep(args.settle_s)
                print(f"idle processes {args.settle_s:.0f} s after ready:")
                within = _memory(dev)
        finally:
            dev.stop()
    best = min(starts)
    print(f"cold start to /readyz on existing data: best {best:.2f} s, median "
          f"{statistics.median(starts):.2f} s (target <= {TARGET_COLD_START_S} s: "
          f"{'ok' if best <= TARGET_COLD_START_S else 'OVER'})")  # fmt: skip
    print(f"web and worker RSS each <= {TARGET_PROCESS_RSS_MIB} MiB: {'ok' if within else 'OVER'}")
    load = os.getloadavg()[0]
    print(f"load average during the run: {load:.1f} on {os.cpu_count()} cores")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imports", type=int, default=5)
    parser.add_argument("--starts", type=int, default=2)
    parser.add_argument("--settle-s", type=float, default=10.0)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lookout-startup-"))
    try:
        return _run(args, workdir)
    finally:
        cluster = (workdir / ".lookout" / "pg").resolve()  # elsewhere when postgres is not root
        shutil.rmtree(cluster, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
