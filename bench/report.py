"""Run every benchmark under bench/ and write BENCHMARKS.md.

    .venv/bin/python bench/report.py [--only watches.py ...] [--args "versus.py=--skip-scale"]

For each benchmark: what it measures (its docstring), the exact command, how long it ran, its
output (every figure with the baseline measured in the same run) and the targets it states,
each with its verdict ("met" / "MISSED"). The machine (cores, memory, load) heads the file.
A hand-written section between the NOTES markers of an existing BENCHMARKS.md is kept.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUTPUT = ROOT / "BENCHMARKS.md"
NOTES = ("<!-- notes -->", "<!-- /notes -->")
VERDICT = re.compile(r"\b(met|meets|MISSED|MISSES|holds)\b")
COMMAND = re.compile(r"^\s+\.venv/bin/python bench/\w+\.py")


def benchmarks() -> list[Path]:
    """The bench/*.py whose docstring shows how to run them (`.venv/bin/python bench/x.py`);
    helpers (corpus.py, services.py) have none, _*.py are helpers, this file is the runner."""
    found = []
    for path in sorted(BENCH.glob("[!_]*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if path.name != Path(__file__).name and any(COMMAND.match(ln) for ln in doc.splitlines()):
            found.append(path)
    return found


def described(script: Path) -> str:
    """The script's docstring without its usage line(s)."""
    doc = ast.get_docstring(ast.parse(script.read_text())) or "(no description)"
    kept, usage = [], False
    for line in doc.splitlines():
        usage = bool(COMMAND.match(line)) or (usage and line.strip() != "")
        if not usage:
            kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def run(script: Path, extra: list[str]) -> tuple[list[str], float, int]:
    """(output lines, seconds, exit code); the output is echoed as it comes."""
    command = [sys.executable, str(script.relative_to(ROOT)), *extra]
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line.rstrip("\n"))
    return lines, time.monotonic() - started, process.wait()


def machine() -> str:
    with open("/proc/meminfo") as handle:
        memory = int(handle.readline().split()[1]) / 2**20
    with open("/proc/cpuinfo") as handle:
        model = next((ln.split(":", 1)[1].strip() for ln in handle if "model name" in ln), "?")
    return (
        f"{os.cpu_count()} cores ({model}), {memory:.1f} GiB memory, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}"
    )


def commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return found.stdout.strip() or "unknown"


def kept_notes() -> str:
    if not OUTPUT.exists():
        return f"{NOTES[0]}\n{NOTES[1]}"
    text = OUTPUT.read_text()
    start, end = text.find(NOTES[0]), text.find(NOTES[1])
    if start < 0 or end < start:
        return f"{NOTES[0]}\n{NOTES[1]}"
    return text[start : end + len(NOTES[1])]


def section(script: Path, extra: list[str], result: tuple[list[str], float, int]) -> str:
    lines, seconds, code = result
    command = shlex.join([".venv/bin/python", str(script.relative_to(ROOT)), *extra])
    status = "" if code == 0 else f" **exit code {code}: the script failed**"
    return "\n".join(
        [
            f"## {script.relative_to(ROOT)}",
            "",
            described(script),
            "",
            f"Command: `{command}` (ran {seconds:.0f} s){status}",
            "",
            "```",
            *lines[-150:],
            "```",
            "",
        ]
    )


def summary(results: dict[Path, tuple[list[str], float, int]]) -> list[str]:
    rows = ["| benchmark | figure, target and verdict |", "|---|---|"]
    for script, (lines, _, code) in results.items():
        found = [line.strip() for line in lines if VERDICT.search(line)]
        if code:
            found.append(f"FAILED (exit code {code})")
        for line in found or ["(states no target; figures below)"]:
            rows.append(f"| {script.name} | {' '.join(line.split()).replace('|', '/')} |")
    return rows


def write(results: dict[Path, tuple[list[str], float, int]], extras: dict[str, list[str]],
          load: tuple[float, float]) -> None:  # fmt: skip
    head = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (bench/report.py) on {dt.date.today()} at commit {commit()}.",
        "Each figure is set against a baseline measured in the same run on the same machine;",
        "absolute numbers move with the machine and whatever else runs on it.",
        "",
        f"Machine: {machine()}. Load average {load[0]:.1f} at the start, {load[1]:.1f} at the "
        "end (other work shared the machine: expect noise; ratios within one run count).",
        "",
        kept_notes(),
        "",
        "## Targets",
        "",
        *summary(results),
        "",
    ]
    body = [section(script, extras.get(script.name, []), r) for script, r in results.items()]
    OUTPUT.write_text("\n".join(head + body))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="script names to run (default: all)")
    parser.add_argument("--args", action="append", default=[], help='"script.py=--flag value"')
    args = parser.parse_args()
    extras = {name: shlex.split(flags) for name, _, flags in (a.partition("=") for a in args.args)}
    scripts = [s for s in benchmarks() if not args.only or s.name in args.only]
    load = os.getloadavg()[0]
    results = {}
    for script in scripts:
        print(f"== {script.relative_to(ROOT)}", flush=True)
        results[script] = run(script, extras.get(script.name, []))
    write(results, extras, (load, os.getloadavg()[0]))
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 1 if any(code for _, _, code in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
