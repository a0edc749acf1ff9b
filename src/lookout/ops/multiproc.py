"""Where every Lookout process of a machine writes its metrics (prometheus-client multiprocess).

Kept free of prometheus_client imports: the library picks its storage when first imported, so the
directory must be in the environment before then (the `lookout` command calls `prepare` first).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from lookout.settings import Settings

ENV = "PROMETHEUS_MULTIPROC_DIR"


def directory(settings: Settings) -> Path:
    """LOOKOUT_METRICS_DIR, else one directory per machine and user under the temp dir."""
    if settings.metrics_dir:
        return Path(settings.metrics_dir)
    return Path(tempfile.gettempdir()) / f"lookout-metrics-{os.getuid()}"


def prepare(settings: Settings) -> Path:
    """Point this process (and the processes it starts) at the shared metrics directory."""
    path = directory(settings)
    path.mkdir(parents=True, exist_ok=True)
    os.environ[ENV] = str(path)
    _forget_dead(path)
    return path


def _forget_dead(path: Path) -> None:
    """Drop live gauges of processes that are gone (their counters stay: totals never go down).

    What prometheus_client's mark_process_dead does, but a file another process removed first
    is not an error: processes started together (the Procfile's, two schedulers) clean up the
    same dead pids at once, and the loser of that race exited at start with FileNotFoundError.
    """
    for file in path.glob("gauge_live*_*.db"):
        pid = _pid(file)
        if pid is not None and not _alive(pid):
            file.unlink(missing_ok=True)


def _pid(file: Path) -> int | None:
    tail = file.stem.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
