"""The realistic half of bench/versus.py: real article pages with real edits and noise, the same
for both tools; each tool's reported and missed edits and false changes, beside its speed.

The cases are the mutation corpus of the tests (tests/corpus/mutations.py): for each of --real
pages of tests/corpus/articles/, every edit kind inside the article (a price, seats left, a time,
a date, a version, a list item, a table cell, a ranked list reordered, a word, a name, a number,
a word deep in the page, a paragraph added, removed, two swapped) and every noise kind in the
markup or outside the article (attributes and class names, scripts and styles, hidden tokens,
tracking parameters, session ids and cache busters, a relative time, whitespace, markup only,
a header clock, a trending list, a cookie bar and an ad). One URL per case, watched once by
each tool; a warm-up cycle sees every page before, then every page turns to its after version
and one measured cycle runs each tool (wall time and CPU seconds of its processes).

A reported edit is a watch whose check says it changed (Lookout: its run's answer, and whether
the edit's new value is in that answer; changedetection.io: its `last_changed` moved). Noise
read as a change is a false change. The same cases through Lookout's detection before this
branch (agent/changes.py at BASELINE, in this process, same extraction) are printed first.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import _cdio
import _lookout
import _out
import _pages
import _procs
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.corpus import mutations  # noqa: E402

BASELINE = "afcd5a3"  # the commit this branch started from: the old agent/changes.py
_SAID = """
SELECT r.automation_id, m.parts FROM automation_runs r
JOIN chat_messages m ON m.run_id = r.id AND m.role = 'assistant'
WHERE r.id = ANY($1::uuid[])
"""


class Served:
    """The cases' pages on a local port, in a thread: each before, then each after."""

    def __init__(self, cases: list[mutations.Case], latency_s: float = 0.0) -> None:
        self.cases = cases
        self.latency_s = latency_s  # each page answers after this long (a real site's latency)
        self.after = False
        self.port = _pages.free_port()
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self.thread.start()
        started.wait(30)

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.port}/c/{index}"

    def _serve(self, started: threading.Event) -> None:
        async def page(request: web.Request) -> web.Response:
            case = self.cases[int(request.match_info["n"])]
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            html = case.after if self.after else case.before
            return web.Response(text=html, content_type="text/html")

        async def start() -> None:
            app = web.Application()
            app.router.add_get("/c/{n}", page)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            started.set()

        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def score(cases: list[mutations.Case], detected: set[int]) -> dict[str, Any]:
    edits = {i for i, case in enumerate(cases) if case.edit}
    noise = set(range(len(cases))) - edits
    missed = collections.Counter(cases[i].kind for i in edits - detected)
    false = collections.Counter(cases[i].kind for i in noise & detected)
    return {"edits": len(edits), "reported": len(edits & detected), "missed": missed,
            "noise": len(noise), "false": false}  # fmt: skip


def said(label: str, result: dict[str, Any], extra: str = "") -> None:
    missed, false = result["missed"], result["false"]
    _out.figure(
        f"{label}: edits reported",
        f"{result['reported']} / {result['edits']} ({sum(missed.values())} missed"
        + (f": {dict(missed.most_common())}" if missed else "")
        + f"){extra}",
    )
    _out.figure(
        f"{label}: false changes",
        f"{sum(false.values())} / {result['noise']} noise-only pages"
        + (f" ({dict(false.most_common())})" if false else ""),
    )


def baseline(cases: list[mutations.Case]) -> set[int]:
    """The cases Lookout's detection before this branch reported (same extraction)."""
    from lookout.capabilities import extract

    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BASELINE}:src/lookout/agent/changes.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    spec = importlib.util.spec_from_loader("old_changes", loader=None)
    assert spec is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["old_changes"] = old  # its dataclasses look their module up
    exec(compile(source, "old_changes.py", "exec"), old.__dict__)

    def lines(html: str) -> list[str]:
        markdown = extract.extract(html.encode(), url="https://news.example/a").markdown or ""
        return list(old.snapshot(markdown))

    return {i for i, c in enumerate(cases) if old.diff(lines(c.before), lines(c.after)).changed}


async def lookout_side(
    look: _lookout.Lookout, cases: list[mutations.Case], groups: dict[str, list[int]],
    ids: list[uuid.UUID],
) -> tuple[float, float, set[int], int]:  # fmt: skip
    """(wall s, CPU s, cases reported changed, edits whose new value the answer shows)."""
    meters = {name: _procs.Meter(pids).start() for name, pids in groups.items()}
    cycle = await look.cycle(only=ids)
    cpu = sum(meter.stop()[0] for meter in meters.values()) + cycle.dispatched.cpu_s
    index = {watch: n for n, watch in enumerate(ids)}
    detected = {index[w] for w, verdict in cycle.outcomes.items() if verdict == "changed"}
    rows = await look.db.fetch(_SAID, cycle.dispatched.run_ids)
    text = {row["automation_id"]: "".join(p.get("text", "") for p in row["parts"]) for row in rows}
    shown = sum(
        1 for watch, n in index.items()
        if cases[n].edit and n in detected
        and any(v and v in text.get(watch, "") for v in (cases[n].value, cases[n].other))
    )  # fmt: skip
    return cycle.wall_s, cpu, detected, shown


async def run(dsn: str, redis_url: str, python: Path, pages: int) -> bool:
    cases = list(mutations.cases(mutations.page_ids()[:pages]))
    edits = sum(case.edit for case in cases)
    _out.figure("realistic cases", f"{len(cases)} pages from {pages} real articles "
                f"({edits} edits, {len(cases) - edits} noise)")  # fmt: skip
    said("lookout before this branch (in process)", score(cases, baseline(cases)))
    served = Served(cases)
    urls = [served.url(index) for index in range(len(cases))]
    look = _lookout.Lookout(dsn, redis_url)
    cdio = _cdio.ChangeDetection(python)
    try:
        cdio.watch(urls)
        async with look.opened():
            ids = await look.seed(urls)
            with _lookout.workers(look.env) as worker:
                postgres, redis_server = await look.service_pids()
                groups = {"workers": [worker.pid], "postgres": [postgres], "redis": [redis_server]}
                await look.cycle(only=ids)  # warm-up: first sight of every page
                await asyncio.to_thread(cdio.cycle)
                served.after = True
                ours = await lookout_side(look, cases, groups, ids)
                meter = _procs.Meter([cdio.process.pid])
                wall, theirs = await asyncio.to_thread(cdio.cycle, meter)
    finally:
        cdio.stop()
        served.stop()
    mine = score(cases, ours[2])
    said("lookout", mine, f"; new value in the answer for {ours[3]} of {mine['reported']}")
    said("changedetection.io (defaults)", score(cases, theirs))
    _out.figure("realistic cycle wall (lookout / cdio)",
                f"{ours[0]:.1f} s / {wall:.1f} s = {wall / ours[0]:.2f}x faster")  # fmt: skip
    ratio = ours[1] / max(meter.cpu, 1e-9)
    _out.figure("realistic cycle CPU s (lookout / cdio)",
                f"{ours[1]:.1f} / {meter.cpu:.1f} = {ratio:.2f}x")  # fmt: skip
    return not mine["missed"] and not mine["false"]
