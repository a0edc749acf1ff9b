"""`lookout dev`'s supervisor: Ctrl-C stops every process once, waits for one still finishing
its work, kills only past its wait; one process stopping stops the rest."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

# A process that stops at once, one that takes 3 s to finish after SIGTERM (a worker finishing
# its turn: honcho's own wait killed it 5 s after the first stopped), one that never stops.
QUICK = ["sleep", "100"]
FINISHING = [
    "bash",
    "-c",
    'trap "sleep 3; echo finished; exit 0" TERM; while true; do sleep 0.1; done',
]
STUBBORN = ["bash", "-c", 'trap "echo ignored" TERM; while true; do sleep 0.1; done']
FAILING = ["bash", "-c", "sleep 1; exit 3"]


def _supervisor(commands: dict[str, list[str]], wait_s: float) -> subprocess.Popen[str]:
    code = "import os, sys; from lookout import dev; "
    code += f"sys.exit(dev.supervise({commands!r}, os.environ, {wait_s}))"
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _stopped_by(signum: int, supervisor: subprocess.Popen[str]) -> tuple[str, float]:
    time.sleep(2)  # everything started
    sent = time.monotonic()
    supervisor.send_signal(signum)
    try:
        output, _ = supervisor.communicate(timeout=30)
    finally:
        supervisor.kill()
    return output, time.monotonic() - sent


def test_a_process_finishing_its_work_is_waited_for_not_killed() -> None:
    # Given a quick and a finishing process, with 15 s to stop
    supervisor = _supervisor({"quick": QUICK, "finishing": FINISHING}, 15.0)

    # When Ctrl-C reaches the supervisor, twice (a person pressing it again)
    time.sleep(2)
    supervisor.send_signal(signal.SIGINT)
    time.sleep(0.5)
    supervisor.send_signal(signal.SIGINT)
    output, _ = supervisor.communicate(timeout=30)

    # Then the finishing process ended its work, nothing was killed, and dev exits 0
    assert "finished" in output and "SIGKILL" not in output, output
    assert supervisor.returncode == 0, output


def test_a_process_that_does_not_stop_is_killed_after_the_wait() -> None:
    # Given a process that ignores SIGTERM, with 2 s to stop
    supervisor = _supervisor({"quick": QUICK, "stubborn": STUBBORN}, 2.0)

    # When SIGTERM reaches the supervisor
    output, took = _stopped_by(signal.SIGTERM, supervisor)

    # Then it heard the stop, was killed 2 s later, and dev is gone
    assert "ignored" in output, output
    assert "stubborn still running 2 s after the stop: SIGKILL" in output, output
    assert 2.0 <= took < 10, took
    assert supervisor.returncode == 0


def test_a_process_that_stops_on_its_own_stops_the_rest() -> None:
    # Given a process that fails after a second beside one that would run on
    supervisor = _supervisor({"failing": FAILING, "quick": ["sleep", "137"]}, 15.0)

    # When it fails
    output, _ = supervisor.communicate(timeout=30)

    # Then dev says which stopped and how, stops the other, and exits with its status
    assert "lookout dev: failing stopped (exit status 3)" in output, output
    assert supervisor.returncode == 3, output
    assert subprocess.run(["pgrep", "-f", "sleep 137"], capture_output=True).returncode != 0


def test_a_service_it_started_itself_stopping_stops_the_rest() -> None:
    # Given a child the supervisor did not start from `commands` (as the embedded Redis is
    # started by devservices), that exits after a second, beside a supervised process
    code = (
        "import os, subprocess, sys; from lookout import dev; "
        "service = subprocess.Popen(['sleep', '1']); "
        "status = dev.supervise({'quick': ['sleep', '139']}, os.environ, 15.0); "
        "print('service', service.wait()); sys.exit(status)"
    )
    supervisor = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )

    # When it exits
    output, _ = supervisor.communicate(timeout=30)

    # Then dev says a service stopped, stops the rest, leaves the service to its owner and
    # exits 1: no traceback (it used to reap it and fail on a pid it did not know)
    assert "lookout dev: a service it started (pid " in output, output
    assert "service 0" in output and "Traceback" not in output, output
    assert supervisor.returncode == 1, output
    assert subprocess.run(["pgrep", "-f", "sleep 139"], capture_output=True).returncode != 0
