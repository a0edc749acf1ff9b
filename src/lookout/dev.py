"""`lookout dev`: the whole service on one machine, on embedded defaults, until Ctrl-C.

This process stays up all along, so it loads little: the embedded Postgres and Redis
(lookout.devservices) and honcho's runner. The database work runs in a child (`lookout
dev-setup`, lookout.devsetup); the periodic ticks run in the worker process (lookout.ticks), so
`lookout dev` runs web and worker, not the Procfile's scheduler process (kept for deploys).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from lookout import devservices, settings

KILL_MARGIN_S = 5.0
# One worker process (its threads sized to the machine) runs a machine's turns for `lookout dev`:
# each more one holds ~130 MiB more doing nothing (bench/footprint.py). LOOKOUT_WORKER_PROCESSES
# chooses more.
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


def _procfile() -> Path:
    beside_source = Path(__file__).resolve().parents[2] / "Procfile"
    return beside_source if beside_source.exists() else Path.cwd() / "Procfile"


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


# honcho, told how long to wait for the processes after Ctrl-C before it kills them (its own
# wait, 5 s, is a module constant), and waking once a second when nothing is said instead of
# ten times (its loop polls its event queue every 0.1 s to check that wait: 0.17 % of a core
# of the idle stack, bench/footprint.py). A line or a stop still arrives at once.
_HONCHO = """
import sys, honcho.manager as m
m.KILL_WAIT = float(sys.argv.pop(1))
class Events:
    def __init__(self, inner): self.inner = inner
    def get(self, timeout=None): return self.inner.get(timeout=max(timeout or 0, 1.0))
start = m.Manager._start
def started(self):
    start(self)  # the processes were given the queue itself; the loop reads it through Events
    self.events = Events(self.events)
m.Manager._start = started
from honcho.command import main
sys.exit(main())
"""


def honcho_command(procfile: Path, kill_wait_s: float, *names: str) -> list[str]:
    """`honcho start` of `names`, killing what still runs `kill_wait_s` after the first
    process stopped (honcho's own wait is 5 s)."""
    return [sys.executable, "-c", _HONCHO, str(kill_wait_s), "-f", str(procfile), "start", *names]


def _supervise(env: dict[str, str]) -> int:
    """Run web + worker (it sends the ticks) from the Procfile with honcho until Ctrl-C.

    After Ctrl-C a process with work in flight finishes it (or hands it back) within the
    shutdown grace period plus the wait for cut-off turns; honcho waits that long before it
    kills (it killed them after 5 s: a turn cut there was neither answered nor handed back).
    Processes with nothing in flight stop at once.
    """
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    grace = settings.Settings.from_env(env).shutdown_grace_s
    kill_wait = grace + settings.SHUTDOWN_CANCEL_WAIT_S + KILL_MARGIN_S
    command = honcho_command(_procfile(), kill_wait, "web", "worker")
    child = subprocess.Popen(command, env=env)

    def forward(signum: int, frame: object) -> None:
        child.send_signal(signum)

    # honcho stops every process on SIGINT/SIGTERM; we wait for it, then stop Postgres and Redis.
    signal.signal(signal.SIGTERM, forward)
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGINT)
