"""The README's first commands on a fresh clone, where a new root user clones to: a directory only
root can enter (/root/…, `mktemp -d`). `git clone … && cd lookout && make run`: /readyz answers
200, then Ctrl-C stops everything cleanly."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout import devservices

REPO = Path(__file__).resolve().parents[2]
START_S = 420  # a fresh .venv is installed first (~2-3 min here)


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return int(answer.status) == 200
    except (OSError, urllib.error.URLError):
        return False


def _listening(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except (OSError, urllib.error.URLError):
        return False


def _up(output: str, announced: str) -> bool:
    """Announced, and the worker booted (`lookout dev` runs it in the web process): a person
    presses Ctrl-C on a service that is up."""
    return announced in output and output.count("Worker process is ready for action") >= 1


@pytest.fixture
def private_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="lookout-clone-"))  # 0700: its owner only
    yield path
    cluster = (path / "lookout" / ".lookout" / "pg").resolve()
    shutil.rmtree(path, ignore_errors=True)
    if devservices.CLUSTER_HOME in cluster.parents:
        shutil.rmtree(cluster, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.timeout(START_S + 120)
def test_make_run_from_a_fresh_clone_in_a_private_directory(private_dir: Path) -> None:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: there is nothing to clone")
    # Given a fresh clone in a directory only its owner (root, in CI) can enter
    assert private_dir.stat().st_mode & 0o077 == 0
    subprocess.run(["git", "clone", "-q", str(REPO), str(private_dir / "lookout")], check=True)
    checkout = private_dir / "lookout"
    port = devservices.free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "VENV"}}
    env |= {"PORT": str(port)}
    env.pop("MAKEFLAGS", None)

    # When `make run` starts there
    log = (private_dir / "run.log").open("w+")
    run = subprocess.Popen(
        ["make", "run"], cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: Ctrl-C reaches all of it, as in a terminal
    )  # fmt: skip
    try:
        announced = f"starting on http://127.0.0.1:{port}/ (this machine only"
        deadline = time.monotonic() + START_S
        # The announcement first: until then the free port may be anyone's.
        while run.poll() is None and time.monotonic() < deadline:
            if _up(Path(log.name).read_text(), announced) and _ready(port):
                break
            time.sleep(1)

        # Then it answers /readyz 200 (Postgres and Redis both up), on 127.0.0.1 only
        output = Path(log.name).read_text()
        assert _up(output, announced) and _ready(port), output[-3000:]
        assert "Demo login (shown once): demo@lookout.local / " in output

        # And Ctrl-C stops it cleanly: every process ends, Postgres is shut down, no traceback
        os.killpg(run.pid, signal.SIGINT)
        run.wait(timeout=90)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    log.seek(0)
    output = log.read()
    print(f"make run exited {run.returncode}")
    stopping = output[output.index("SIGINT received") :]
    # Nothing killed, and Redis and Postgres outlived the processes that were still using them
    assert "SIGKILL" not in stopping and "Connection refused" not in stopping, stopping[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert not _listening(port)
    cluster = (checkout / ".lookout" / "pg").resolve()
    assert (cluster / "PG_VERSION").exists() and not (cluster / "postmaster.pid").exists()
    with pytest.raises(ProcessLookupError):
        os.killpg(run.pid, 0)  # nothing of the group is left
