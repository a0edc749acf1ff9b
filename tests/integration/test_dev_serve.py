"""`lookout dev-serve` (what `lookout dev` runs): the web app and a worker in one process. It
serves, its worker runs the ticks it sends, and it stops cleanly on SIGTERM."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from lookout import devservices, ticks
from lookout.settings import Settings

LOOKOUT = Path(sys.executable).parent / "lookout"


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def test_web_and_worker_in_one_process(settings: Settings) -> None:
    # Given `lookout dev-serve` told to send the ticks, early in a minute
    while dt.datetime.now(dt.UTC).second > ticks.LATE_IN_MINUTE_S - 25:
        time.sleep(1)
    port = devservices.free_port()
    env = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url,
           "LOOKOUT_SECRET_KEY": settings.secret_key, "LOOKOUT_PUBLIC_URL": settings.public_url,
           "LOOKOUT_WORKER_SCHEDULER": "1", "LOOKOUT_SHUTDOWN_GRACE_S": "2", "PORT": str(port),
           "LOOKOUT_HOST": "127.0.0.1"}  # fmt: skip
    log = Path(tempfile.mkstemp(prefix="lookout-dev-serve-", suffix=".log")[1])
    with log.open("w") as out:
        served = subprocess.Popen(
            [str(LOOKOUT), "dev-serve"], env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (
            time.monotonic() < deadline
            and "dispatch_due_watches() scheduled" not in log.read_text()
        ):
            assert served.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        text = log.read_text()

        # Then it is one process that serves and whose worker ran the ticks it sent
        assert _status(f"http://127.0.0.1:{port}/readyz") == 200, text[-3000:]
        assert text.count("Worker process is ready for action") == 1, text[-3000:]
        assert "sending the periodic ticks from this worker process" in text, text[-3000:]
        assert "Scheduling dispatch_due_watches at " in text, text[-3000:]
        assert "Processing " in text and "dispatch_due_watches() scheduled at" in text, text
        assert psutil.Process(served.pid).children() == [], "a worker process of its own"
    finally:
        # And SIGTERM stops web and worker within seconds, with nothing killed
        served.send_signal(signal.SIGTERM)
        code = served.wait(30)
    text = log.read_text()
    log.unlink()
    assert code == 0, text[-3000:]
    assert "Worker has been shut down" in text and "Traceback" not in text, text[-3000:]
