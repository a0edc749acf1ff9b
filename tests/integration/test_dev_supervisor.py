"""`lookout dev`'s honcho waits for a process that is still finishing its work after Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from lookout import dev

# A process that stops at once, and one that takes 7 s to finish after SIGTERM (a worker
# finishing its turn): honcho's own wait killed the second 5 s after the first stopped.
PROCFILE = """\
quick: exec sleep 100
finishing: bash -c 'trap "sleep 7; echo finished; exit 0" TERM; while true; do sleep 0.1; done'
"""


def test_a_process_finishing_its_work_is_waited_for_not_killed(tmp_path: Path) -> None:
    # Given both processes under dev's honcho, told to wait up to 15 s
    procfile = tmp_path / "Procfile"
    procfile.write_text(PROCFILE)
    command = dev.honcho_command(procfile, 15.0, "quick", "finishing")
    honcho = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(2)  # both started

        # When it is told to stop (Ctrl-C reaches it as SIGINT)
        honcho.send_signal(signal.SIGINT)
        output, _ = honcho.communicate(timeout=30)
    finally:
        honcho.kill()

    # Then the finishing process ended its work, and nothing was killed
    assert "finished" in output and "SIGKILL" not in output, output
