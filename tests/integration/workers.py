"""Run real `lookout worker` processes for integration tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from lookout.settings import Settings


def env_for(settings: Settings) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "LOOKOUT_SECRET_KEY": settings.secret_key,
        "LOOKOUT_PUBLIC_URL": settings.public_url,
        "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "1" if settings.allow_private_networks else "0",
        "TZ": "UTC",
    }


@contextlib.contextmanager
def running_worker(settings: Settings, *, processes: int = 1, threads: int = 4) -> Iterator[Path]:
    """A real Dramatiq worker; yields the path of its combined log, stops it with SIGTERM."""
    log = Path(tempfile.mkstemp(prefix="lookout-worker-", suffix=".log")[1])
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "lookout.cli", "worker", "--processes", str(processes),
             "--threads", str(threads)],
            env=env_for(settings), stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            yield log
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
