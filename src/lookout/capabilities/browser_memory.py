"""The hard memory budget of a rendered page: a renderer process past LOOKOUT_BROWSER_MEMORY_MB of
resident memory is killed, and the page it served answers a per-page error.

The JavaScript heap cap (`--max-old-space-size`) bounds V8 only; a page's canvases, images, DOM
and layout live outside it, in the renderer's native heap. So while a page renders, a watcher
reads the resident set size of every Chromium renderer under this process (`--type=renderer`,
found through psutil's process tree) every POLL_S and kills the one over budget: Chromium
reports the page crashed (Playwright's `crash` event), the load fails at once, and the context
is closed. One browser context never shares a renderer with another, so the page whose renderer
died is the one that spent the memory.

psutil (maintained, a C extension) rather than reading /proc by hand: a sweep of a worker's
process tree (~10 processes) measured ~1 ms here, run off the event loop (asyncio.to_thread).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time

import psutil

logger = logging.getLogger(__name__)

POLL_S = 0.2
_RENDERER = "--type=renderer"


@dataclasses.dataclass
class Watchdog:
    """Kills renderers over `budget_mb` of RSS; remembers when it last did."""

    budget_mb: int
    root_pid: int = dataclasses.field(default_factory=os.getpid)
    kills: int = 0
    last_kill: float = 0.0  # time.monotonic() of the last kill

    def sweep(self) -> int:
        """Kill every renderer over budget now; how many were killed (blocking: ~1 ms)."""
        killed = 0
        for process in _renderers(self.root_pid):
            try:
                rss = process.memory_info().rss
                if rss <= self.budget_mb * 1024 * 1024:
                    continue
                process.kill()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
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
