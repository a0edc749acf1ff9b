"""Private Postgres and Redis servers for `lookout dev` and the test suite (one machine only)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from lookout.errors import ConfigError

_START_TIMEOUT_S = 30.0


@dataclasses.dataclass
class Server:
    url: str
    stop_command: list[str] | None = None
    process: subprocess.Popen[bytes] | None = None

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
    return ["runuser", "-u", "postgres", "--", *command]


def _need(binary: str, hint: str) -> str:
    found = shutil.which(binary) or shutil.which(binary, path="/usr/lib/postgresql/15/bin")
    if not found:
        raise ConfigError(f"{binary} is not installed: {hint}")
    return found


def _own(path: Path) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        for item in [path, *path.rglob("*")]:
            os.chown(item, entry.pw_uid, entry.pw_gid)


def start_postgres(data_dir: Path, *, database: str = "lookout") -> Server:
    """Create (once) and start a private cluster on a free loopback port; trust auth, local only."""
    initdb = _need("initdb", "apt-get install -y postgresql")
    pg_ctl = _need("pg_ctl", "apt-get install -y postgresql")
    data_dir.mkdir(parents=True, exist_ok=True)
    _own(data_dir)
    if not (data_dir / "PG_VERSION").exists():
        subprocess.run(
            _as_postgres(
                [
                    initdb,
                    "-D",
                    str(data_dir),
                    "--auth=trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                ]
            ),
            check=True,
            capture_output=True,
        )
    port = free_port()
    options = f"-p {port} -k {data_dir} -c listen_addresses=127.0.0.1 -c max_connections=300"
    subprocess.run(
        _as_postgres(
            [
                pg_ctl,
                "-D",
                str(data_dir),
                "-o",
                options,
                "-l",
                str(data_dir / "server.log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    server = Server(
        url=f"postgresql://postgres@127.0.0.1:{port}/{database}",
        stop_command=_as_postgres([pg_ctl, "-D", str(data_dir), "-m", "fast", "-w", "stop"]),
    )
    _create_database(port, database)
    return server


def _create_database(port: int, database: str) -> None:
    psql = _need("psql", "apt-get install -y postgresql-client")
    exists = subprocess.run(
        [
            psql,
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "postgres",
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{database}'",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not exists:
        subprocess.run(
            [
                psql,
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "-c",
                f'CREATE DATABASE "{database}"',
            ],
            check=True,
            capture_output=True,
        )


def start_redis(data_dir: Path) -> Server:
    """Start a private redis-server on a free loopback port, persisting under data_dir."""
    binary = _need(
        "redis-server", "install it with `apt-get install -y redis-server` (or `make run` as root)"
    )
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data_dir),
            "--save",
            "60 1",
            "--appendonly",
            "no",
            "--protected-mode",
            "yes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for_port(port, process)
    return Server(url=f"redis://127.0.0.1:{port}/0", process=process)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigError(f"redis-server exited at start (code {process.returncode})")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise ConfigError(f"redis-server did not listen on port {port} in {_START_TIMEOUT_S:.0f}s")


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
