"""How the watch benchmarks print: one figure a line, its baseline, ratio, target and verdict.

bench/report.py lists every printed line that carries a verdict ("met" / "MISSED") as a target.
"""

from __future__ import annotations

import os


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def figure(label: str, text: str) -> None:
    print(f"{label:<40} {text}", flush=True)


def note(text: str) -> None:
    print(f"  {text}", flush=True)


def mib(size: float) -> str:
    return f"{size / 2**20:.0f} MiB"


def sized(count: float) -> str:
    """Bytes in the unit that keeps 2-4 digits."""
    for unit in ("B", "KiB", "MiB"):
        if count < 10_000:
            return f"{count:.0f} {unit}"
        count /= 1024
    return f"{count:.0f} GiB"


def machine() -> str:
    with open("/proc/meminfo") as handle:
        total_kb = int(handle.readline().split()[1])
    load = os.getloadavg()[0]
    return f"{os.cpu_count()} cores, {total_kb / 2**20:.1f} GiB memory, load {load:.1f} at start"
