"""What Lookout's embedded stack costs doing nothing, against changedetection.io, in one run.

Lookout: `lookout dev` as a newcomer starts it (its private Postgres and Redis, every process
it starts: supervisor, web, workers, scheduler, Postgres and its backends, Redis), on a data
directory already holding 1,000 hourly watches (none due in the window). changedetection.io:
`changedetection.py -d <datastore>` as its README starts it, scheduler running, 1,000 watches
imported and checked once (pages on a closed loopback port) before the window.

Printed: cold start to ready (Lookout: `lookout dev` to /readyz 200 on existing data; cdio:
to its first HTTP answer), idle CPU % of a core over the same measured window, idle PSS and RSS
summed and per process; each against its target (issue #30). Then Lookout's memory again after
one chat turn: LangGraph loads with a process's first turn (agent.graph.OnDemand), so the idle
figure holds only until a chat or a watch runs, and this one is what a used stack holds.

--apart runs the Procfile's processes as a deploy does (`lookout dev` with
LOOKOUT_WORKER_PROCESSES=2 starts `lookout web` and `lookout worker`, Dramatiq's CLI with two
worker processes, instead of its one process), so each production process is measured on its own.
Run from a production install (`pip install .`, no dev extras: in the dev venv httpx also loads
rich and pygments, ~4 MiB a process) with the source tree on PYTHONPATH:

    .venv/bin/python bench/footprint.py [--watches 1000] [--idle-s 60] [--settle-s 20] [--apart]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import _cdio
import _lookout
import _pages
import _procs

from lookout import devservices

TARGET_IDLE_CPU_PCT = 0.5
TARGET_PSS_RATIO = 3.0
TARGET_PROCESS_RSS_MIB = 120
TARGET_COLD_START_S = 3.0
MIB = 1024 * 1024
CLOSED = "http://127.0.0.1:9/page-{}"  # discard port: nothing listens, a check fails at once


def _get(url: str, timeout: float = 2) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def _wait_status(url: str, process: subprocess.Popen[bytes], limit_s: float = 120) -> float:
    started = time.monotonic()
    while _get(url) != 200:
        if process.poll() is not None:
            raise RuntimeError(f"exited ({process.returncode}) before {url} answered")
        if time.monotonic() - started > limit_s:
            raise RuntimeError(f"{url} not ready in {limit_s} s")
        time.sleep(0.05)
    return time.monotonic() - started


def _seed(workdir: Path, watches: int) -> None:
    """1,000 watches in the Postgres `lookout dev` will find (its own data directory)."""
    postgres = devservices.start_postgres(workdir / ".lookout" / "pg")
    try:
        lookout = _lookout.Lookout(postgres.url, "redis://127.0.0.1:1/0")

        async def seed() -> None:
            async with lookout.opened():
                await lookout.seed([CLOSED.format(i) for i in range(watches)])

        asyncio.run(seed())
    finally:
        postgres.stop()


class Dev:
    """`lookout dev` in `workdir`, its port known."""

    def __init__(self, workdir: Path, *, apart: bool = False) -> None:
        self.workdir, self.port = workdir, _pages.free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update(PORT=str(self.port), LOOKOUT_ALLOW_PRIVATE_NETWORKS="1")
        if apart:
            env["LOOKOUT_WORKER_PROCESSES"] = "2"
        lookout = Path(sys.executable).parent / "lookout"
        self.log = (workdir / "dev.log").open("ab")
        self.process = subprocess.Popen(
            [str(lookout), "dev"], cwd=workdir, env=env, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            self.ready_s = _wait_status(f"http://127.0.0.1:{self.port}/readyz", self.process)
        except RuntimeError:
            self.log.flush()
            print((workdir / "dev.log").read_text(errors="replace")[-4000:], file=sys.stderr)
            raise

    def roots(self) -> list[int]:
        """The dev process (its tree: supervisor, web, workers, scheduler, Redis) and the
        postmaster, which pg_ctl detaches."""
        pid_file = (self.workdir / ".lookout" / "pg").resolve() / "postmaster.pid"
        return [self.process.pid, int(pid_file.read_text().split()[0])]

    def turn(self) -> None:
        """One chat turn through the REST door with the demo API key, its stream read to the end."""
        said = (self.workdir / "dev.log").read_text(errors="replace")
        key = re.findall(r"Demo API key \(shown once\): (\S+)", said)[-1]
        headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
        url = f"http://127.0.0.1:{self.port}/api/chats"
        made = urllib.request.Request(url, data=b"{}", method="POST", headers=headers)
        with urllib.request.urlopen(made, timeout=30) as response:
            chat_id = json.loads(response.read())["data"]["id"]
        body = json.dumps({"text": "hello"}).encode()
        asked = urllib.request.Request(f"{url}/{chat_id}/messages", data=body, headers=headers)
        with urllib.request.urlopen(asked, timeout=60) as response:
            stream = response.read().decode()
        if '"type":"finish"' not in stream.replace(" ", ""):
            raise RuntimeError(f"the turn did not finish: {stream[-2000:]}")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        started = time.monotonic()
        try:
            self.process.wait(90)
            print(f"lookout dev stopped in {time.monotonic() - started:.1f} s")
        except subprocess.TimeoutExpired:
            print("lookout dev not stopped in 90 s: killed", file=sys.stderr)
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


class Cdio:
    """changedetection.io as a user starts it, with `watches` imported and checked once."""

    def __init__(self, python: Path, watches: int) -> None:
        self.datastore = Path(tempfile.mkdtemp(prefix="cdio-footprint-"))
        self.port = _pages.free_port()
        self.log = (self.datastore / "server.log").open("wb")
        started = time.monotonic()
        self.process = subprocess.Popen(
            [str(python), str(python.parent / "changedetection.py"), "-d", str(self.datastore),
             "-p", str(self.port), "-h", "127.0.0.1"],
            env={**os.environ, "ALLOW_IANA_RESTRICTED_ADDRESSES": "true"},
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.ready_s = _wait_status(f"http://127.0.0.1:{self.port}/", self.process)
        self.ready_s = time.monotonic() - started
        store = self.datastore / "changedetection.json"
        self.key = json.loads(store.read_text())["settings"]["application"]["api_access_token"]
        body = "\n".join(CLOSED.format(i) for i in range(watches)).encode()
        self._call("POST", "/api/v1/import", body)
        deadline = time.monotonic() + 300  # then measured anyway
        while not self._checked(watches) and time.monotonic() < deadline:
            time.sleep(1)

    def _checked(self, watches: int) -> bool:
        try:
            listed = self._call("GET", "/api/v1/watch") or {}
        except urllib.error.HTTPError as exc:  # listing fails while the import is adding
            if exc.code != 500:
                raise
            return False
        queue = self._call("GET", "/queue.json") or {}
        done = sum(1 for watch in listed.values() if watch.get("last_checked"))
        return len(listed) >= watches and done >= watches and not queue.get("queued_count")  # type: ignore[attr-defined]

    def _call(self, method: str, path: str, body: bytes | None = None) -> object:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=body, method=method,
            headers={"x-api-key": self.key, "content-type": "text/plain"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw.strip() else None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:  # seen: still closing its threads after 30 s
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.datastore, ignore_errors=True)


def _process_name(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [Path(w.decode(errors="replace")).name if i == 0 else w.decode(errors="replace")
             for i, w in enumerate(raw) if w]  # fmt: skip
    if words and words[0].startswith("python") and len(words) > 1:
        words = words[1:]
    return " ".join(" ".join(words).split())[:60]


def _memory(roots: list[int]) -> list[tuple[str, int, int]]:
    """(name, RSS, PSS) of every process in the trees."""
    rows = []
    for pid in _procs.tree(roots):
        rss, pss = _own(pid)
        rows.append((f"{pid} {_process_name(pid)}", rss, pss))
    return rows


def _own(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, pss


def _own_cpu(roots: list[int]) -> dict[int, float]:
    """Each process's own CPU seconds (utime + stime, its reaped children not included)."""
    found = {}
    for pid in _procs.tree(roots):
        with contextlib.suppress(OSError):
            raw = Path(f"/proc/{pid}/stat").read_text()
            fields = raw[raw.rindex(")") + 2 :].split()
            found[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def _idle(name: str, roots: list[int], idle_s: float) -> tuple[float, list[tuple[str, int, int]]]:
    """Idle CPU % of a core over `idle_s` (the trees, reaped children included), then memory
    of every process; each process's own CPU printed."""
    before, own, started = _procs.cpu_seconds(roots), _own_cpu(roots), time.monotonic()
    time.sleep(idle_s)
    cpu = _procs.cpu_seconds(roots) - before
    wall = time.monotonic() - started
    print(f"{name}: {cpu:.2f} CPU s in {wall:.1f} s idle; by process:", flush=True)
    for pid, seconds in sorted(_own_cpu(roots).items(), key=lambda item: -item[1]):
        used = seconds - own.get(pid, 0.0)
        if used > 0:
            print(f"  {100 * used / wall:6.3f} %  {pid} {_process_name(pid)}")
    return 100 * cpu / wall, _memory(roots)


def _show(name: str, cpu_pct: float, rows: list[tuple[str, int, int]]) -> tuple[int, int]:
    rss, pss = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"\n{name}: {len(rows)} processes, idle CPU {cpu_pct:.2f} % of a core, "
          f"PSS {pss / MIB:.0f} MiB, RSS {rss / MIB:.0f} MiB")  # fmt: skip
    for label, one_rss, one_pss in sorted(rows, key=lambda r: -r[2]):
        print(f"  {one_pss / MIB:7.1f} PSS {one_rss / MIB:7.1f} RSS MiB  {label}")
    return rss, pss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watches", type=int, default=1000)
    parser.add_argument("--idle-s", type=float, default=60.0)
    parser.add_argument("--settle-s", type=float, default=20.0)
    parser.add_argument("--apart", action="store_true", help="the Procfile's processes apart")
    args = parser.parse_args()
    # `lookout dev` is stopped with SIGINT, as Ctrl-C does: started from a shell's background job
    # this process (and so every child) would ignore it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    workdir = Path(tempfile.mkdtemp(prefix="lookout-footprint-"))
    try:
        return _run(args, workdir)
    finally:
        cluster = (workdir / ".lookout" / "pg").resolve()  # elsewhere when postgres is not root
        shutil.rmtree(cluster, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)


def _run(args: argparse.Namespace, workdir: Path) -> int:
    _seed(workdir, args.watches)
    first = Dev(workdir, apart=args.apart)  # makes the demo account: not "existing data"
    first.stop()
    dev = Dev(workdir, apart=args.apart)
    try:
        print(f"lookout dev ready in {dev.ready_s:.2f} s (first start {first.ready_s:.2f} s)")
        time.sleep(args.settle_s)
        lookout_cpu, lookout_rows = _idle("lookout", dev.roots(), args.idle_s)
        dev.turn()
        time.sleep(5)
        turned_rows = _memory(dev.roots())
    finally:
        dev.stop()
    cdio = Cdio(_cdio.ensure_installed(), args.watches)
    try:
        time.sleep(args.settle_s)
        cdio_cpu, cdio_rows = _idle("changedetection.io", [cdio.process.pid], args.idle_s)
    finally:
        cdio.stop()
    _, pss = _show("Lookout (lookout dev, Postgres and Redis counted)", lookout_cpu, lookout_rows)
    _, cdio_pss = _show("changedetection.io", cdio_cpu, cdio_rows)
    python_rss = [r[1] for r in lookout_rows if "postgres" not in r[0] and "redis" not in r[0]]
    print(f"\n{args.watches} watches, idle window {args.idle_s:.0f} s after {args.settle_s:.0f} s")
    print(f"cold start to ready: {dev.ready_s:.2f} s (target <= {TARGET_COLD_START_S} s); "
          f"changedetection.io {cdio.ready_s:.2f} s")  # fmt: skip
    print(
        f"idle CPU: {lookout_cpu:.2f} % of a core (target <= {TARGET_IDLE_CPU_PCT} %); "
        f"changedetection.io {cdio_cpu:.2f} %, ratio {lookout_cpu / max(cdio_cpu, 1e-9):.2f}x"
    )
    print(
        f"idle PSS: {pss / MIB:.0f} MiB vs {cdio_pss / MIB:.0f} MiB: "
        f"{pss / cdio_pss:.2f}x (target <= {TARGET_PSS_RATIO}x)"
    )
    print(
        f"largest Lookout Python process: {max(python_rss) / MIB:.0f} MiB RSS "
        f"(target <= {TARGET_PROCESS_RSS_MIB} MiB)"
    )
    turned_pss = sum(r[2] for r in turned_rows)
    turned_rss = [r[1] for r in turned_rows if "postgres" not in r[0] and "redis" not in r[0]]
    print(
        f"after one chat turn: PSS {turned_pss / MIB:.0f} MiB, {turned_pss / cdio_pss:.2f}x "
        f"changedetection.io's idle; largest Python process {max(turned_rss) / MIB:.0f} MiB RSS"
    )
    for label, one_rss, one_pss in sorted(turned_rows, key=lambda r: -r[1]):
        if "postgres" not in label and "redis" not in label:
            print(f"  {one_pss / MIB:7.1f} PSS {one_rss / MIB:7.1f} RSS MiB  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
