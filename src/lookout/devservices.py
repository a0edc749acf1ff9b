"""Private Postgres and Redis servers for `lookout dev` and the test suite (one machine only)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from lookout import pgbin
from lookout.errors import ConfigError

_START_TIMEOUT_S = 30.0
SERVER_USER = "postgres"
# Clusters of checkouts the server user cannot reach (root's, as root): one directory each.
CLUSTER_HOME = Path("/var/lib/lookout/clusters")


@dataclasses.dataclass
class Server:
    url: str
    stop_command: list[str] | None = None
    process: subprocess.Popen[bytes] | None = None
    location: Path | None = None

    def stop(self) -> None:
        if self.stop_command:
            subprocess.run(self.stop_command, check=False, capture_output=True)
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(command: list[str]) -> list[str]:
    """Postgres refuses to run as root: drop to the `postgres` user when we are root."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", SERVER_USER, "--", *command]


def _server_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise ConfigError(
            f"there is no `{SERVER_USER}` user to run PostgreSQL as (it refuses to run as root): "
            f"install the distribution's server (apt-get install -y postgresql), which creates it"
        ) from None


def _own(path: Path) -> None:
    if os.geteuid() == 0:
        entry = _server_user()
        for item in [path, *path.rglob("*")]:
            os.chown(item, entry.pw_uid, entry.pw_gid)


def _server_can_enter(directory: Path) -> bool:
    """Whether the server user can reach `directory` (every directory above it searchable)."""
    try:
        probe = subprocess.run(
            _as_postgres(["test", "-x", str(directory)]), capture_output=True, check=False
        )
    except OSError as exc:
        raise ConfigError(
            f"cannot run commands as {SERVER_USER} ({exc.strerror}): install util-linux "
            f"(runuser), or set DATABASE_URL to a PostgreSQL you run"
        ) from None
    return probe.returncode == 0


def place_cluster(data_dir: Path, *, home: Path = CLUSTER_HOME) -> Path:
    """Where the cluster of `data_dir` lives: there, unless we are root and the server user cannot
    reach it (a checkout under /root or in a `mktemp -d` folder). Then it lives in
    home/<hash of data_dir>, which only that user owns, and `data_dir` becomes a link to it, so a
    re-run finds the same data. No directory of the checkout is opened to anyone."""
    data_dir = data_dir.absolute()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    real = data_dir.resolve()
    if os.geteuid() != 0 or _server_can_enter(real.parent):
        return real
    entry = _server_user()
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)
    target = home / hashlib.sha256(str(real).encode()).hexdigest()[:16]
    if real.is_dir() and not target.exists():
        shutil.move(str(real), str(target))  # an earlier cluster (or attempt) moves with it
    target.mkdir(mode=0o700, exist_ok=True)
    os.chown(target, entry.pw_uid, entry.pw_gid)
    if not data_dir.is_symlink():
        data_dir.symlink_to(target, target_is_directory=True)
    return target


def _message(output: bytes | str | None, limit: int = 400) -> str:
    """A tool's own output as one line (its last lines, where the reason is)."""
    text = output.decode(errors="replace") if isinstance(output, bytes) else output or ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    joined = " / ".join(lines[-3:])
    return joined if len(joined) <= limit else "…" + joined[-limit:]


def _run(command: list[str], *, what: str, fix: str, log: Path | None = None) -> str:
    """Run a service tool; its failure is one ConfigError line: what failed, the tool's own
    message (or the last lines of its log), and the fix."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ConfigError(f"{what} could not run ({command[0]}: {exc.strerror}); {fix}") from None
    if done.returncode != 0:
        said = _message(done.stderr) or _message(done.stdout)
        if log is not None and log.exists():
            said = _message(log.read_text(errors="replace")) or said
        raise ConfigError(f"{what} failed (exit {done.returncode}): {said}; {fix}")
    return done.stdout


def start_postgres(data_dir: Path, *, database: str = "lookout") -> Server:
    """Create (once) and start a private cluster on a free loopback port; trust auth, local only."""
    bindir = pgbin.find_bindir()
    data_dir = place_cluster(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    _own(data_dir)
    fix = f"fix that, or delete {data_dir} to start over, or set DATABASE_URL to a PostgreSQL"
    if not (data_dir / "PG_VERSION").exists():
        initdb = [str(bindir / "initdb"), "-D", str(data_dir), "--auth=trust", "-U", "postgres"]
        initdb += ["-E", "UTF8", "--locale=C.UTF-8"]
        _run(_as_postgres(initdb), what=f"initdb (creating the cluster in {data_dir})", fix=fix)
    port = free_port()
    options = f"-p {port} -k {data_dir} -c listen_addresses=127.0.0.1 -c max_connections=300"
    pg_ctl, log = str(bindir / "pg_ctl"), data_dir / "server.log"
    start = [pg_ctl, "-D", str(data_dir), "-o", options, "-l", str(log), "-w", "-t", "60", "start"]
    _run(_as_postgres(start), what=f"PostgreSQL (starting {data_dir})", fix=fix, log=log)
    server = Server(
        url=f"postgresql://postgres@127.0.0.1:{port}/{database}",
        stop_command=_as_postgres([pg_ctl, "-D", str(data_dir), "-m", "fast", "-w", "stop"]),
        location=data_dir,
    )
    try:
        _create_database(pgbin.tool(bindir, "psql"), port, database)
    except ConfigError:
        server.stop()
        raise
    return server


def _create_database(psql: str, port: int, database: str) -> None:
    connect = [psql, "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
    fix = "see the server log beside the cluster, or set DATABASE_URL to a PostgreSQL"
    query = f"SELECT 1 FROM pg_database WHERE datname = '{database}'"
    if not _run([*connect, "-tAc", query], what="psql", fix=fix).strip():
        _run([*connect, "-c", f'CREATE DATABASE "{database}"'], what="psql", fix=fix)


REDIS_HINT = (
    "install it (as root: apt-get install -y redis-server; `make run` does) or set REDIS_URL"
)


REDIS_HZ = 2


def start_redis(data_dir: Path) -> Server:
    """Start a private redis-server on a free loopback port, persisting under data_dir."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ConfigError(f"redis-server is not installed: {REDIS_HINT}")
    data_dir.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), data_dir / "redis.log"
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir)]
    command += ["--save", "60 1", "--appendonly", "no", "--protected-mode", "yes"]
    # Its timers 2 times a second, not 10: idle, Redis was the stack's largest user of CPU
    # (0.18 % of a core, bench/footprint.py); expiry and blocking timeouts stay within 0.5 s.
    command += ["--hz", str(REDIS_HZ)]
    with log.open("ab") as output:
        # Its own session: a Ctrl-C in the terminal must not stop Redis under the workers that
        # are still finishing; `lookout dev` stops it after them.
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(url=f"redis://127.0.0.1:{port}/0", process=process, location=data_dir)
    try:
        _wait_for_port(port, process, log)
    except ConfigError:
        server.stop()
        raise
    return server


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = _message(log.read_bytes()) or "no output"
            raise ConfigError(
                f"redis-server exited at start (exit {process.returncode}): {said}; "
                f"fix that (its log: {log}), or set REDIS_URL to a Redis you run"
            )
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise ConfigError(
        f"redis-server did not listen on port {port} in {_START_TIMEOUT_S:.0f}s: see {log}"
    )


@contextlib.contextmanager
def services(root: Path) -> Iterator[tuple[Server, Server]]:
    """Postgres and Redis under root/, stopped on exit."""
    postgres = start_postgres(root / "pg")
    try:
        redis = start_redis(root / "redis")
        try:
            yield postgres, redis
        finally:
            redis.stop()
    finally:
        postgres.stop()
