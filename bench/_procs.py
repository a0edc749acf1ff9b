"""CPU seconds and memory of process trees, read from /proc while a benchmark runs.

CPU of a tree = utime + stime + cutime + cstime of every live process in it: a child that
exits is folded into its parent's cutime/cstime when reaped, so nothing is lost or counted
twice (Postgres backends come and go under the postmaster). Memory = the sum of PSS
(proportional set size): pages shared between processes (Postgres shared buffers, forked
Python workers) are split between them instead of being counted once per process, which is
what summing RSS would do.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            raw = handle.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    return raw[raw.rindex(")") + 2 :].split()


def _parents() -> dict[int, int]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            found[int(entry)] = int(fields[1])
    return found


def tree(roots: Iterable[int]) -> list[int]:
    """The roots and all their live descendants."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    out, stack = [], list(roots)
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, ()))
    return out


def cpu_seconds(roots: Iterable[int]) -> float:
    total = 0
    for pid in tree(roots):
        if (fields := _stat(pid)) is not None:
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / _TICK


def memory_bytes(roots: Iterable[int]) -> tuple[int, int]:
    """(RSS, PSS) summed over the trees. Summed RSS counts a page shared by several processes
    (a forked worker's, Postgres's shared buffers) once a process; PSS splits it between them."""
    rss = pss = 0
    for pid in tree(roots):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
                    break
    return rss, pss


class Meter:
    """CPU seconds used and peak memory (summed PSS; summed RSS in `peak_rss`) of some process
    trees between start() and stop().

    Memory is sampled every `interval_s` and at stop. Reading PSS makes the kernel walk each
    process's page tables: ~10 ms for Lookout's worker tree, ~9 for Postgres (more with its
    backends), ~30 for Redis, of CPU taken from the machine both systems share. Sampled every
    0.25 s, that was ~0.2 of a core (of 2) during Lookout's cycles and ~0.02 during
    changedetection.io's (one process), so the meter slowed the side it measured most.
    """

    def __init__(self, roots: Iterable[int], interval_s: float = 2.0) -> None:
        self.roots = list(roots)
        self.interval_s = interval_s
        self.peak = 0
        self.peak_rss = 0
        self.cpu = 0.0
        self._cpu0 = 0.0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Meter:
        self._cpu0 = cpu_seconds(self.roots)
        self.peak = self.peak_rss = 0
        self._measure()
        self._done.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> tuple[float, int]:
        """(CPU seconds, peak PSS bytes) since start()."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self._measure()
        self.cpu = cpu_seconds(self.roots) - self._cpu0
        return self.cpu, self.peak

    def _sample(self) -> None:
        while not self._done.wait(self.interval_s):
            self._measure()

    def _measure(self) -> None:
        rss, pss = memory_bytes(self.roots)
        self.peak, self.peak_rss = max(self.peak, pss), max(self.peak_rss, rss)
