"""`lookout dev`: the whole service on one machine, on embedded defaults, until Ctrl-C.

This process stays up all along, so it loads little: the embedded Postgres and Redis
(lookout.devservices) and a small supervisor. The database work runs in a child (`lookout
dev-setup`, lookout.devsetup); web and worker run in one more (`lookout dev-serve`,
lookout.together), which also sends the periodic ticks (lookout.ticks): not the Procfile's
three processes (kept for deploys).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from lookout import devservices, settings

KILL_MARGIN_S = 5.0
# One worker (its threads sized to the machine), in the web process, runs a machine's turns for
# `lookout dev`: each more worker process holds ~130 MiB more doing nothing (bench/footprint.py).
# LOOKOUT_WORKER_PROCESSES chooses more, then in a `lookout worker` of their own.
DEV_WORKER_PROCESSES = "1"
LOCAL_HOST = "127.0.0.1"


def _root() -> Path:
    return Path.cwd() / ".lookout"


def _secret(root: Path) -> str:
    path = root / "secret_key"
    if not path.exists():
        root.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(32))
        path.chmod(0o600)
    return path.read_text().strip()


@contextlib.contextmanager
def _backing_services(root: Path) -> Iterator[dict[str, str]]:
    """Use DATABASE_URL / REDIS_URL when set; otherwise private servers under .lookout/."""
    env: dict[str, str] = {}
    stack = contextlib.ExitStack()
    with stack:
        if "DATABASE_URL" not in os.environ:
            postgres = devservices.start_postgres(root / "pg")
            stack.callback(postgres.stop)
            env["DATABASE_URL"] = postgres.url
            if postgres.location and postgres.location != (root / "pg").absolute():
                print(f"PostgreSQL data: {postgres.location} (the postgres user cannot enter "
                      f"{root}; {root / 'pg'} links to it)", flush=True)  # fmt: skip
        if "REDIS_URL" not in os.environ:
            redis = devservices.start_redis(root / "redis")
            stack.callback(redis.stop)
            env["REDIS_URL"] = redis.url
        yield env


def _setup(env: Mapping[str, str]) -> dict[str, str] | None:
    """Migrate and create the demo account, in a child; None if it failed (it said why)."""
    command = [os.path.join(os.path.dirname(sys.executable), "lookout"), "dev-setup"]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode:
        return None
    found: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def run(port: int | None = None) -> int:
    root = _root()
    with _backing_services(root) as env:
        env.setdefault("LOOKOUT_SECRET_KEY", os.environ.get("LOOKOUT_SECRET_KEY") or _secret(root))
        env["PORT"] = str(port or os.environ.get("PORT", "8000"))
        # This machine only, unless asked: `lookout web` keeps the platforms' 0.0.0.0.
        env["LOOKOUT_HOST"] = os.environ.get("LOOKOUT_HOST") or LOCAL_HOST
        env.update(dev_defaults(env["PORT"], os.environ))
        env["LOOKOUT_WORKER_PROCESSES"] = (
            os.environ.get("LOOKOUT_WORKER_PROCESSES") or DEV_WORKER_PROCESSES
        )
        env.setdefault("TZ", "UTC")
        env["LOOKOUT_WORKER_SCHEDULER"] = "1"  # the worker sends the ticks: no scheduler
        full = {**os.environ, **env}
        demo = _setup(full)
        if demo is None:
            return 2
        _announce(env["LOOKOUT_HOST"], env["PORT"], demo)
        return _supervise(full)


def _announce(host: str, port: str, demo: Mapping[str, str]) -> None:
    url = f"http://{LOCAL_HOST if host in ('0.0.0.0', '::') else host}:{port}/"
    if host == LOCAL_HOST:
        reach = "this machine only; LOOKOUT_HOST=0.0.0.0 opens it to the network"
    else:
        reach = f"listening on {host} (LOOKOUT_HOST): open to the network"
    print(f"\nLookout is starting on {url} ({reach})", flush=True)
    if demo:
        print(f"Demo login (shown once): {demo['email']} / {demo['password']}")
        print(f"Demo API key (shown once): {demo['key']}\n", flush=True)


def dev_defaults(port: str, environ: Mapping[str, str]) -> dict[str, str]:
    """What `lookout dev` sets unless the environment does: links, Origin checks and MCP
    metadata name the loopback URL it serves at, and anyone with the page may sign up (outside
    `lookout dev` LOOKOUT_PUBLIC_URL is required and sign-up is by invitation: see the README)."""
    return {
        "LOOKOUT_PUBLIC_URL": environ.get("LOOKOUT_PUBLIC_URL") or dev_url(port),
        "LOOKOUT_SIGNUP": environ.get("LOOKOUT_SIGNUP") or "open",
    }


def dev_url(port: str) -> str:
    """The loopback URL `lookout dev` serves at: its LOOKOUT_PUBLIC_URL unless one is set."""
    return f"http://127.0.0.1:{port}"


def commands(env: Mapping[str, str]) -> dict[str, list[str]]:
    """The processes `lookout dev` runs: web and worker in one (lookout.together), or with
    LOOKOUT_WORKER_PROCESSES above 1 the web and `lookout worker` apart."""
    lookout = os.path.join(os.path.dirname(sys.executable), "lookout")
    if env.get("LOOKOUT_WORKER_PROCESSES", DEV_WORKER_PROCESSES) == "1":
        return {"web": [lookout, "dev-serve"]}
    return {"web": [lookout, "web"], "worker": [lookout, "worker"]}


def _supervise(env: dict[str, str]) -> int:
    """Run the processes until Ctrl-C (or SIGTERM), or until one of them stops.

    After Ctrl-C a process with work in flight finishes it (or hands it back) within the
    shutdown grace period plus the wait for cut-off turns; it is killed only after that.
    Processes with nothing in flight stop at once.
    """
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    grace = settings.Settings.from_env(env).shutdown_grace_s
    kill_wait = grace + settings.SHUTDOWN_CANCEL_WAIT_S + KILL_MARGIN_S
    return supervise(commands(env), env, kill_wait)


class _Stop(Exception):
    """A stop signal reached the supervisor."""


def supervise(commands: Mapping[str, list[str]], env: Mapping[str, str], kill_wait_s: float) -> int:
    """Start `commands`, each in its own session (a terminal's Ctrl-C reaches this process
    alone, which stops them once), and wait. On SIGINT/SIGTERM, or when one stops: SIGTERM to
    the rest, SIGKILL to what still runs `kill_wait_s` later. The exit status: the first
    process's to stop on its own, else 0.

    This replaced honcho: its wrapper process per child and `sh -c` held ~19 MiB PSS of an
    idle stack (bench/footprint.py), and its loop woke to poll its queue.
    """
    running: dict[int, tuple[str, subprocess.Popen[bytes]]] = {}

    def stop(signum: int, frame: object) -> None:
        raise _Stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    status = 0
    try:
        try:
            for name, command in commands.items():
                child = subprocess.Popen(command, env=dict(env), start_new_session=True)
                running[child.pid] = (name, child)
            name, code = _first_to_stop(running)
            print(f"lookout dev: {name} stopped (exit status {code})", flush=True)
            status = code or 1
        except _Stop as heard:
            print(f"lookout dev: {heard} received, stopping", flush=True)
        for sig in previous:  # a second Ctrl-C waits like the first: the stop is under way
            signal.signal(sig, signal.SIG_IGN)
        _stop_all(running, kill_wait_s)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status


def _first_to_stop(running: dict[int, tuple[str, subprocess.Popen[bytes]]]) -> tuple[str, int]:
    """Wait for a child of this process to end: (its name, its exit status). A child that is
    not one of `running` (the embedded Redis, which devservices started and reaps) is left to
    its owner; it ends the wait all the same, as the service cannot go on without it."""
    ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
    if ended is None or ended.si_pid not in running:
        pid = ended.si_pid if ended is not None else "?"
        return f"a service it started (pid {pid})", 1
    name, child = running.pop(ended.si_pid)
    return name, child.wait()


def _stop_all(running: dict[int, tuple[str, subprocess.Popen[bytes]]], wait_s: float) -> None:
    for _, child in running.values():
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    for name, child in running.values():
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"lookout dev: {name} still running {wait_s:.0f} s after the stop: SIGKILL",
                  flush=True)  # fmt: skip
            child.kill()
            child.wait()
