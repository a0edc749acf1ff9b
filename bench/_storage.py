"""Storage per watch after N checks of realistic pages, and the CPU of one scheduled turn.

    .venv/bin/python bench/_storage.py [--watches 4] [--checks 50]

Each watch reads one real article of tests/corpus/articles/ (the mutation corpus of
bench/_realistic.py); at every check its page turns to the next version: a noise case (attributes,
scripts, tracking parameters, a clock, an ad...) four checks out of five and an edit inside the
article the fifth, so a fifth of the checks report a change and the rest must not. Checks run as a
worker runs them (watches.runner.execute, in this process, against real Postgres and Redis).

Counted, per watch, every row its runs touch: the thread's LangGraph checkpoints, blobs and
writes, its automation_runs rows, its chat's messages, its watch_versions and notifications
(pg_column_size of each row: what the heap and TOAST hold, compressed where Postgres compresses,
indexes not counted). Figures: after the N checks as left, and after the once-a-minute checkpoint
sweep (agent.pruning) that any running worker does. Not counted: the per-check page snapshots of
the watch history (another branch adds them; not on this one).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
import uuid
from typing import Any

import _lookout
import _out
import _pages
from aiohttp import web

from lookout.agent import pruning
from lookout.db import checkpointer

_SIZES = """
WITH a AS (SELECT id, (action ->> 'thread_id') AS thread FROM automations WHERE id = $1)
SELECT
  (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM checkpoints c, a WHERE c.thread_id = a.thread)
    AS checkpoints,
  (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM checkpoint_blobs b, a
   WHERE b.thread_id = a.thread) AS checkpoint_blobs,
  (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM checkpoint_writes w, a
   WHERE w.thread_id = a.thread) AS checkpoint_writes,
  (SELECT coalesce(sum(pg_column_size(r.*)), 0) FROM automation_runs r WHERE r.automation_id = $1)
    AS automation_runs,
  (SELECT coalesce(sum(pg_column_size(m.*)), 0) FROM chat_messages m, a
   WHERE m.chat_id = a.thread::uuid) AS chat_messages,
  (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM watch_versions v WHERE v.automation_id = $1)
    AS watch_versions,
  (SELECT coalesce(sum(pg_column_size(n.*)), 0) FROM notification_deliveries n
   JOIN automation_runs r ON r.id = n.run_id WHERE r.automation_id = $1) AS notification_deliveries
"""


@dataclasses.dataclass
class Versions:
    """Page `i`'s current HTML, set by the bench before each check."""

    html: dict[int, str] = dataclasses.field(default_factory=dict)


def serve(versions: Versions) -> tuple[int, asyncio.AbstractEventLoop, threading.Thread]:
    port = _pages.free_port()
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=versions.html[int(request.match_info["n"])],
                            content_type="text/html")  # fmt: skip

    async def start() -> None:
        app = web.Application()
        app.router.add_get("/w/{n}", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        started.set()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(30)
    return port, loop, thread


def schedule(cases: list[Any], checks: int) -> list[tuple[str, bool]]:
    """(HTML, whether it is an edit to report) at each check of one article's watch."""
    edits = [case for case in cases if case.edit]
    noise = [case for case in cases if not case.edit]
    out = [(cases[0].before, False)]
    for check in range(1, checks):
        if check % 5 == 0:
            case = edits[(check // 5) % len(edits)]
            out.append((case.after, True))
        else:
            # Each noise case is the clean page plus one noise: a check after an edit returns
            # to the clean page, and that return is a change to report too.
            out.append((noise[check % len(noise)].after, False))
    return out


async def measure(
    dsn: str, redis_url: str, watches: int, checks: int
) -> dict[str, Any]:  # fmt: skip
    from tests.corpus import mutations

    every = mutations.page_ids()
    articles = every[:: max(1, len(every) // watches)][:watches]  # spread over the corpus
    plans = [schedule(list(mutations.cases([page])), checks) for page in articles]
    versions = Versions()
    port, loop, thread = serve(versions)
    look = _lookout.Lookout(dsn, redis_url)
    said: dict[str, int] = {"changed": 0, "unchanged": 0, "first": 0, "failed": 0}
    wrong = 0
    turn_s: list[float] = []
    cpu_s: list[float] = []
    redis_cmds: list[int] = []  # Redis commands a check (what its scripts run included)
    try:
        async with look.opened():
            ids = await look.seed([f"http://127.0.0.1:{port}/w/{n}" for n in range(watches)])
            async with look.in_process() as opened:
                for check in range(checks):
                    for n, automation in enumerate(ids):
                        html, _ = plans[n][check]
                        versions.html[n] = html
                        cpu = time.process_time()
                        before = await opened[0].redis.info("stats")
                        wall, _status = await look.run_now(opened, automation)
                        cpu_s.append(time.process_time() - cpu)
                        after = await opened[0].redis.info("stats")
                        # minus the INFO call itself
                        redis_cmds.append(after["total_commands_processed"]
                                          - before["total_commands_processed"] - 1)  # fmt: skip
                        turn_s.append(wall)
                        verdict = await _verdict(look, automation)
                        said[verdict if verdict in said else "failed"] += 1
                        if check and _expected(plans[n], check) != (verdict == "changed"):
                            wrong += 1
                left = [await _sizes(look, a) for a in ids]
                async with checkpointer.saver_context(look.settings.database_url) as saver:

                    async def saver_of() -> Any:
                        return saver

                    await pruning.sweep(look.db, saver_of)
                swept = [await _sizes(look, a) for a in ids]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    return {"left": left, "swept": swept, "said": said, "wrong": wrong,
            "turn_s": turn_s, "cpu_s": cpu_s, "redis_cmds": redis_cmds}  # fmt: skip


def _expected(plan: list[tuple[str, bool]], check: int) -> bool:
    """Whether check `check` must report a change: an edit, or the return from one."""
    return plan[check][0] != plan[check - 1][0] and (plan[check][1] or plan[check - 1][1])


async def _verdict(look: _lookout.Lookout, automation: uuid.UUID) -> str:
    row = await look.db.fetchrow(
        "SELECT r.id FROM automation_runs r WHERE r.automation_id = $1 "
        "ORDER BY r.created_at DESC LIMIT 1",
        automation,
    )
    said, _ = await look.outcomes([row["id"]])
    return said.get(automation, "failed")


async def _sizes(look: _lookout.Lookout, automation: uuid.UUID) -> dict[str, int]:
    row = await look.db.fetchrow(_SIZES, automation)
    return {key: int(value) for key, value in row.items()}


def per_watch(sizes: list[dict[str, int]]) -> dict[str, float]:
    return {key: sum(s[key] for s in sizes) / len(sizes) for key in sizes[0]}


def report(found: dict[str, Any], checks: int) -> float:
    """Print the figures; returns bytes per watch after the sweep."""
    for label in ("left", "swept"):
        table = per_watch(found[label])
        total = sum(table.values())
        shown = ", ".join(f"{k} {_out.sized(v)}" for k, v in table.items() if v)
        _out.figure(f"storage per watch, {checks} checks ({label})",
                    f"{_out.sized(total)} ({shown})")  # fmt: skip
    _out.note(f"verdicts: {found['said']}; wrong verdicts (vs. the page plan): {found['wrong']}")
    cmds = sorted(found["redis_cmds"][len(found["left"]) :])  # past the first looks
    _out.note(f"Redis commands a check: median {cmds[len(cmds) // 2]}, max {cmds[-1]}")
    return sum(per_watch(found["swept"]).values())


def main() -> int:
    import argparse
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import services

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watches", type=int, default=4)
    parser.add_argument("--checks", type=int, default=50)
    args = parser.parse_args()
    with services.backing() as (dsn, redis_url):
        found = asyncio.run(measure(dsn, redis_url, args.watches, args.checks))
    report(found, args.checks)
    cpu = sorted(found["cpu_s"])
    _out.note(f"in-process CPU ms per check, median: {1000 * cpu[len(cpu) // 2]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
