"""`lookout dev`'s worker sends the periodic ticks itself (LOOKOUT_WORKER_SCHEDULER): from one
of its processes only, once per due minute, and it still stops cleanly."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lookout import periodic, ticks
from lookout.settings import Settings

LOOKOUT = Path(sys.executable).parent / "lookout"


def _output(log: Path) -> str:
    return log.read_text(errors="replace")


def test_two_worker_processes_send_each_tick_once(settings: Settings) -> None:
    # Given `lookout worker` with two processes, told to send the ticks, early in a minute
    while dt.datetime.now(dt.UTC).second > ticks.LATE_IN_MINUTE_S - 25:
        time.sleep(1)
    env = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url,
           "LOOKOUT_SECRET_KEY": settings.secret_key, "LOOKOUT_PUBLIC_URL": settings.public_url,
           "LOOKOUT_WORKER_SCHEDULER": "1", "LOOKOUT_SHUTDOWN_GRACE_S": "2"}  # fmt: skip
    log = Path(tempfile.mkstemp(prefix="lookout-worker-ticks-", suffix=".log")[1])
    started = dt.datetime.now(dt.UTC)
    with log.open("w") as out:
        worker = subprocess.Popen(
            [str(LOOKOUT), "worker", "--processes", "2", "--threads", "1"], env=env, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        due = ticks.due(periodic.ALL, started)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            text = _output(log)
            if (
                text.count("Worker process is ready") == 2
                and "Scheduling prune_checkpoints" in text
            ):
                break
            time.sleep(0.5)
        time.sleep(3)  # the other process would have ticked by now
        text = _output(log)

        # Then one process sends the ticks, each due actor's once, and the workers run them
        assert text.count("Worker process is ready") == 2, text[-3000:]
        assert text.count("sending the periodic ticks from this worker process") == 1, text
        for entry in due:
            assert text.count(f"Scheduling {entry.actor_name} at ") == 1, (entry, text[-3000:])
        assert "Processing " in text and "scheduled at" in text, text[-3000:]
    finally:
        # And it stops on SIGTERM, the ticking thread with it
        os.killpg(worker.pid, signal.SIGTERM)
        code = worker.wait(60)
        log.unlink()
    assert code == 0
