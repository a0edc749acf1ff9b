"""The hard memory budget of a rendered page: a renderer process past LOOKOUT_BROWSER_MEMORY_MB of
resident memory is killed, and the page it served answers a per-page error.

The JavaScript heap cap (`--max-old-space-size`) bounds V8 only; a page's canvases, images, DOM
and layout live outside it, in the renderer's native heap. So while a page renders, a watcher
reads the resident set size of every Chromium renderer under this process (`--type=renderer`,
found through psutil's process tree) every POLL_S and kills the one over budget: Chromium
reports the page crashed (Playwright's `crash` event), the load fails at once, and the context
is closed. One browser context never shares a renderer with another, so the page whose renderer
died is the one that spent the memory.

psutil (maintained, a C extension) rather than reading /proc by hand. Finding the renderers walks
every process of the machine (psutil builds the parent map from all of /proc): 6 ms of CPU with
234 processes here, so it is done at most every RESCAN_S, and the sweeps between read only the
known renderers' memory (one small /proc read each). All of it runs off the event loop. psutil
loads with the first sweep (a worker's first rendered page): 0.8 MiB RSS the web process, which
never renders, does not hold.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

logger = logging.getLogger(__name__)

POLL_S = 0.2
# A renderer started since the last scan (a cross-site navigation, an iframe) is found this soon.
RESCAN_S = 1.0
_RENDERER = "--type=renderer"


@dataclasses.dataclass
class Watchdog:
    """Kills renderers over `budget_mb` of RSS; remembers when it last did."""

    budget_mb: int
    root_pid: int = dataclasses.field(default_factory=os.getpid)
    kills: int = 0
    last_kill: float = 0.0  # time.monotonic() of the last kill
    _known: list[psutil.Process] = dataclasses.field(default_factory=list)
    _scanned: float = -RESCAN_S
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def sweep(self) -> int:
        """Kill every renderer over budget now; how many were killed (blocking; the pages
        rendering at once each sweep from a thread, one at a time)."""
        with self._lock:
            return self._sweep()

    def _sweep(self) -> int:
        import psutil

        if time.monotonic() - self._scanned >= RESCAN_S:
            self._known, self._scanned = _renderers(self.root_pid), time.monotonic()
        killed = 0
        for process in list(self._known):
            try:
                rss = process.memory_info().rss
                if rss <= self.budget_mb * 1024 * 1024:
                    continue
                process.kill()  # psutil checks the pid was not reused since it was found
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                self._known.remove(process)
                continue
            logger.warning(
                "killed a browser renderer over its memory budget (%d MB > %d MB)",
                rss // (1024 * 1024), self.budget_mb,
            )  # fmt: skip
            killed += 1
        if killed:
            self.kills += killed
            self.last_kill = time.monotonic()
        return killed

    def killed_since(self, started: float) -> bool:
        return self.last_kill >= started


def _renderers(root_pid: int) -> list[psutil.Process]:
    import psutil

    try:
        descendants = psutil.Process(root_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for process in descendants:
        try:
            if _RENDERER in process.cmdline():
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found
