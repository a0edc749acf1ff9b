"""Fault tests' own Postgres and Redis (which they stop and start) and real Lookout processes.

The servers come from `lookout.devservices`; a restart reuses the port, so every client
reconnects to the same address. Each process runs in its own session (process group), so a test
can SIGKILL a worker together with the Dramatiq children it forked, and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from lookout import devservices, pgbin

REPO = Path(__file__).resolve().parents[2]
PG_OPTIONS = "-p {port} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=300"


def _pg_ctl() -> str:
    return str(pgbin.find_bindir() / "pg_ctl")


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class Postgres:
    """A private cluster that can be stopped and started again on the same port."""

    def __init__(self, data_dir: Path) -> None:
        server = devservices.start_postgres(data_dir)
        self.data_dir = server.location or data_dir  # moved where postgres can reach it
        self.server_url = server.url.rsplit("/", 1)[0]
        self.port = int(self.server_url.rsplit(":", 1)[1])
        self.running = True

    def stop(self) -> None:
        """Fast shutdown: open sessions are cut (clients see AdminShutdown / a closed socket)."""
        command = [_pg_ctl(), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"]
        subprocess.run(_as_postgres(command), check=True, capture_output=True)
        self.running = False

    def start(self) -> None:
        options = PG_OPTIONS.format(port=self.port, data=self.data_dir)
        command = [_pg_ctl(), "-D", str(self.data_dir), "-o", options,
                   "-l", str(self.data_dir / "server.log"), "-w", "-t", "60", "start"]  # fmt: skip
        subprocess.run(_as_postgres(command), check=True, capture_output=True)
        self.running = True

    def ensure_running(self) -> None:
        if not self.running:
            self.start()


class Redis:
    """A private redis-server that can be stopped (SIGTERM: it saves) and started again."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.server = devservices.start_redis(data_dir)
        self.url = self.server.url
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    @property
    def running(self) -> bool:
        process = self.server.process
        return process is not None and process.poll() is None

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed"
        # The arguments devservices.start_redis uses, on the port the clients know.
        process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir),
             "--save", "60 1", "--appendonly", "no", "--protected-mode", "yes",
             "--hz", str(devservices.REDIS_HZ)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.server = devservices.Server(url=self.url, process=process)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            time.sleep(0.05)
        raise AssertionError("redis-server did not come back")

    def ensure_running(self) -> None:
        if not self.running:
            self.start()


@dataclasses.dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def signal_group(self, sig: int) -> None:
        """Signal this process and every child it forked (its own session), nothing else."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def stop(self, timeout: float = 8) -> None:
        if self.alive:
            self.signal_group(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal_group(signal.SIGKILL)
                self.popen.wait()
        self.signal_group(signal.SIGKILL)  # children the parent left behind


class Processes:
    """Real Lookout processes for one test, stopped at the end."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.started: list[Proc] = []

    def spawn(self, name: str, argv: list[str], **env: str) -> Proc:
        log = Path(tempfile.mkstemp(prefix=f"lookout-fault-{name}-", suffix=".log")[1])
        with log.open("wb") as sink:
            popen = subprocess.Popen(
                argv, env={**self.env, **env}, stdout=sink, stderr=subprocess.STDOUT,
                cwd=REPO, start_new_session=True,
            )  # fmt: skip
        proc = Proc(name, popen, log)
        self.started.append(proc)
        return proc

    def lookout(self, name: str, *args: str, **env: str) -> Proc:
        return self.spawn(name, [sys.executable, "-m", "lookout.cli", *args], **env)

    def worker(
        self, *, processes: int = 1, threads: int = 4, queues: tuple[str, ...] = (), **env: str
    ) -> Proc:
        """A Dramatiq worker through faults_worker (the lease lengths may come from env)."""
        argv = [str(Path(sys.executable).with_name("dramatiq")), "tests.reliability.faults_worker",
                "--processes", str(processes), "--threads", str(threads)]  # fmt: skip
        if queues:
            argv += ["--queues", *queues]
        return self.spawn("worker", argv, **env)

    def stop_all(self) -> None:
        for proc in reversed(self.started):
            proc.stop()


async def web(procs: Processes, name: str = "web", **env: str) -> tuple[Proc, str]:
    """`lookout web` on a free port; (process, base url) once /healthz answers."""
    port = devservices.free_port()
    proc = procs.lookout(name, "web", PORT=str(port), LOOKOUT_HOST="127.0.0.1", **env)
    base = f"http://127.0.0.1:{port}"
    await until(lambda: _healthy(base), 60, proc)
    return proc, base


async def _healthy(base: str) -> bool:
    try:
        async with aiohttp.ClientSession() as http, http.get(base + "/healthz") as got:
            return got.status == 200
    except aiohttp.ClientError:
        return False


async def until(check: Any, seconds: float, proc: Proc | None = None, every: float = 0.1) -> None:
    """Wait for `await check()` to be true; fail naming the process (and its log) if it died."""
    deadline = time.monotonic() + seconds
    while not await check():
        if proc is not None and not proc.alive:
            raise AssertionError(f"{proc.name} exited:\n{proc.tail()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s" + (
                f"; {proc.name} log:\n{proc.tail()}" if proc else ""))  # fmt: skip
        await asyncio.sleep(every)
