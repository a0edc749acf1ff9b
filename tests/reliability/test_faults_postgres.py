"""Postgres restarted under traffic: 503 `unavailable` during the outage, every process back on
its own within 10 s, and nothing committed is lost or doubled.

Real web, worker and scheduler processes; REST verb calls, chat turns and dispatcher ticks run
in loops while the test stops its own Postgres (fast shutdown: sessions are cut) and starts it
again on the same port. The worker's run lease is 6 s instead of 90 s (faults_worker) so that
the sweep ends the runs the outage interrupted within the test.
"""

from __future__ import annotations

import asyncio
import collections
import time
import uuid
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from lookout.db import pool
from tests.reliability import faults_load, faults_report, faults_stack, faults_watches
from tests.reliability.conftest import FaultStack

pytestmark = pytest.mark.slow

TITLE = "Postgres restarted under traffic"
WHAT = (
    "Real web, worker and scheduler. 3 REST loops (web.scrape), 4 chat loops plus 2 started "
    "during the outage (a new chat per turn), a dispatcher tick every second; Postgres stopped "
    "(fast shutdown) for 5 s and started on the same port. Held: a success, or near the outage "
    "the 503 unavailable envelope (or, for a turn in flight, an error part). Recovery: first "
    "success after Postgres was back."
)

WARM_S = 4.0
DOWN_S = 5.0
AFTER_S = 15.0
RECOVERY_S = 10.0
RUN_LEASE_S = 6.0
WATCHES = 8


@pytest.fixture
async def pages(aiohttp_server: Any) -> dict[str, str]:
    """/fast answers at once; /slow after a second, so chat turns are in flight at the cut."""

    async def handle(request: web.Request) -> web.Response:
        if request.path == "/slow":
            await asyncio.sleep(1.0)
        html = "<html><head><title>News</title></head><body><main><p>Quiet day.</p></main>"
        return web.Response(text=html + "</body></html>", content_type="text/html")

    server_app = web.Application()
    server_app.router.add_get("/{name}", handle)
    server = await aiohttp_server(server_app)
    return {"fast": str(server.make_url("/fast")), "slow": str(server.make_url("/slow"))}


async def dispatch_loop(
    stack: FaultStack, watch_ids: list[uuid.UUID], ticks: list[tuple[float, bool]], stop: Any
) -> None:
    """Every second: make the next watch due (when Postgres lets us) and tick the dispatcher."""
    n = 0
    while not stop.is_set():
        armed = True
        try:
            await faults_watches.make_due(stack.db, [watch_ids[n % len(watch_ids)]])
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            armed = False
        await faults_watches.tick(stack.settings)
        ticks.append((time.time(), armed))
        n += 1
        await asyncio.sleep(1.0)


async def locked_chats(stack: FaultStack) -> list[dict[str, Any]]:
    """Chats whose lease is held: seconds left, watched or not, their messages."""
    async with pool.pool_context(stack.settings.database_url, max_size=1) as db:
        rows = await db.fetch(
            "SELECT c.id, extract(epoch FROM responding_until - clock_timestamp()) AS left_s, "
            "EXISTS (SELECT 1 FROM automations a WHERE a.action ->> 'thread_id' = c.id::text) "
            "AS watched, (SELECT array_agg(role ORDER BY seq) FROM chat_messages m "
            "WHERE m.chat_id = c.id) AS roles "
            "FROM chats c WHERE ai_responding AND responding_until > clock_timestamp()"
        )
    return [
        {"left_s": round(float(r["left_s"]), 1), "watched": r["watched"], "roles": r["roles"]}
        for r in rows
    ]


async def start_processes(stack: FaultStack) -> tuple[list[faults_stack.Proc], str]:
    web_proc, base = await faults_stack.web(stack.procs)
    worker = stack.procs.worker(threads=4, LOOKOUT_FAULTS_RUN_LEASE_S=str(RUN_LEASE_S))
    scheduler = stack.procs.lookout("scheduler", "scheduler")

    async def ready() -> bool:
        return "Worker process is ready" in worker.log.read_text(errors="replace")

    await faults_stack.until(ready, 60, worker)
    return [web_proc, worker, scheduler], base


@pytest.mark.timeout(300)
async def test_postgres_restart_under_traffic(
    fault_stack: FaultStack, pages: dict[str, str]
) -> None:
    # Given web, worker and scheduler serving REST calls, chat turns and dispatches
    stack = fault_stack
    user_id, workspace_id, (key,) = await stack.tenant(credits=100_000)
    watches = await faults_watches.make_watches(
        stack.db, stack.settings, user_id, workspace_id, f"what is on {pages['slow']}", WATCHES
    )
    procs, base = await start_processes(stack)
    recorder = faults_load.Recorder()
    ticks: list[tuple[float, bool]] = []
    tasks = recorder.start(
        *(faults_load.rest_loop(recorder, base, key, pages["fast"], 0.1) for _ in range(3)),
        *(faults_load.chat_loop(recorder, base, key, pages[p], 0.05) for p in ("slow", "fast") * 2),
        dispatch_loop(stack, [w.id for w in watches], ticks, recorder.stop),
    )

    # When Postgres is stopped for 5 s and started again on the same port
    await asyncio.sleep(WARM_S)
    await asyncio.to_thread(stack.cluster.postgres.stop)
    down = time.monotonic()
    # (the first chat loops wait inside their turn; these two ask while Postgres is down)
    tasks += recorder.start(
        *(faults_load.chat_loop(recorder, base, key, pages["slow"], 0.2) for _ in range(2))
    )
    await asyncio.sleep(DOWN_S)
    starting = time.monotonic()  # pg_ctl returns a moment after the server accepts again
    await asyncio.to_thread(stack.cluster.postgres.start)
    back, back_wall = time.monotonic(), time.time()
    await asyncio.sleep(AFTER_S)
    await faults_load.stop(recorder, tasks, faults_load.TURN_LIMIT_S + 5)

    # Then (checked in `judge`) the outage answered 503, every process came back, nothing
    # committed was lost or doubled
    async with pool.pool_context(stack.settings.database_url, max_size=2) as db:
        await faults_watches.wait_statuses(
            db, [r["id"] for r in await faults_watches.runs(db, [w.id for w in watches])],
            faults_watches.TERMINAL, 30, settings=stack.settings,
        )  # fmt: skip
        figures = await judge(db, recorder, (down, starting, back), back_wall, workspace_id)
    # Every turn has ended: a chat still locked now was left locked by the outage
    figures["chats_left_locked"] = await locked_chats(stack)
    figures["processes_alive"] = {p.name: p.alive for p in procs}
    figures["dispatch_ticks"] = len(ticks)
    faults_report.write("postgres-restart", figures, title=TITLE, what=WHAT)
    assert all(figures["processes_alive"].values()), [p.tail() for p in procs]
    assert figures["outage_answers_not_503"] == [], figures
    assert figures["server_errors"] == [] and figures["hung_turns"] == 0, figures
    for door in ("rest", "chat", "dispatch"):
        assert figures["recovery_s"][door] is not None, figures
        assert figures["recovery_s"][door] <= RECOVERY_S, figures
    assert figures["failed_after_recovery"] == {}, figures
    assert figures["chats_left_locked"] == [], figures
    assert figures["lost"] == figures["duplicated"] == {"messages": 0, "ledger": 0, "runs": 0}


async def judge(
    db: asyncpg.Pool,
    recorder: faults_load.Recorder,
    window: tuple[float, float, float],
    back_wall: float,
    workspace_id: uuid.UUID,
) -> dict[str, Any]:
    down, starting, back = window
    answers = recorder.answers
    # Sent while Postgres was down and over a second before it was started again: one sent just
    # before may reach it up (its statement waits for the loaded machine's event loop)
    during = [a for a in answers if down <= a.sent < starting - 1.0]
    recovered = [a for a in answers if a.sent >= back + RECOVERY_S]
    lost, duplicated = await books(db, recorder, workspace_id)
    return {
        "down_s": round(back - down, 1),
        "tried": {k: len(recorder.of(k)) for k in ("rest", "chat")},
        "held": {k: sum(_held(a, down, back) for a in recorder.of(k)) for k in ("rest", "chat")},
        "during_outage": dict(collections.Counter(f"{a.kind} {a.status} {a.code}" for a in during)),
        "chat_answers": _outcomes(recorder.of("chat")),
        "spanning_outage": _outcomes([a for a in answers if a.sent < down < a.done]),
        "runs": await _run_statuses(db, workspace_id),
        "outage_answers_not_503": [
            f"{a.kind} {a.status} {a.code}" for a in during if not _unavailable(a)
        ],
        "server_errors": [
            f"{a.kind} {a.status} {a.code} at {a.sent - down:+.1f} s"
            for a in answers
            if a.status >= 500 and a.status != 503
        ],
        "hung_turns": sum(a.hung for a in answers),
        "recovery_s": {
            "rest": _first_ok(recorder.of("rest"), back),
            "chat": _first_ok(recorder.of("chat"), back),
            "dispatch": await _first_run(db, back_wall),
        },
        "failed_after_recovery": _outcomes([a for a in recovered if not _ok(a)]),
        "open_reservations": await _open_reservations(db, workspace_id),
        "lost": lost,
        "duplicated": duplicated,
    }


async def _run_statuses(db: asyncpg.Pool, workspace_id: uuid.UUID) -> dict[str, int]:
    rows = await db.fetch(
        "SELECT status || coalesce(': ' || error, '') AS status, count(*) AS n "
        "FROM automation_runs WHERE workspace_id = $1 GROUP BY 1",
        workspace_id,
    )
    return {row["status"]: row["n"] for row in rows}


def _outcomes(answers: list[faults_load.Answer]) -> dict[str, int]:
    return dict(collections.Counter(
        f"{a.kind} {a.status} {'finished' if a.finished else a.code}" for a in answers
    ))  # fmt: skip


def _unavailable(answer: faults_load.Answer) -> bool:
    return (answer.status, answer.code) == (503, "unavailable")


def _ok(answer: faults_load.Answer) -> bool:
    if answer.kind == "chat":
        return answer.status == 200 and answer.finished
    return answer.status == 200


def _held(answer: faults_load.Answer, down: float, back: float) -> bool:
    """Answered as promised: success, or (around the outage) the unavailable envelope."""
    if _ok(answer):
        return True
    near = down - 35 <= answer.sent <= back + RECOVERY_S
    return near and (answer.status == 503 or answer.code in ("internal", "unavailable"))


def _first_ok(answers: list[faults_load.Answer], back: float) -> float | None:
    done = [a.done - back for a in answers if a.sent >= back and _ok(a)]
    return round(min(done), 2) if done else None


async def _first_run(db: asyncpg.Pool, back_wall: float) -> float | None:
    """Seconds from Postgres back to the first run dispatched after it that succeeded."""
    first = await db.fetchval(
        "SELECT min(extract(epoch FROM created_at)) FROM automation_runs "
        "WHERE created_at >= to_timestamp($1) AND status = 'succeeded'",
        back_wall,
    )
    return None if first is None else round(float(first) - back_wall, 2)


async def _open_reservations(db: asyncpg.Pool, workspace_id: uuid.UUID) -> int:
    """Reservations the outage left open (the sweeper refunds them after their deadline)."""
    return int(await db.fetchval(
        "SELECT count(*) FROM credit_ledger r WHERE r.workspace_id = $1 AND r.kind = 'reserve' "
        "AND NOT EXISTS (SELECT 1 FROM credit_ledger c WHERE c.workspace_id = r.workspace_id "
        "AND c.request_id = r.request_id AND c.kind IN ('settle', 'refund'))",
        workspace_id,
    ))  # fmt: skip


async def books(
    db: asyncpg.Pool, recorder: faults_load.Recorder, workspace_id: uuid.UUID
) -> tuple[dict[str, int], dict[str, int]]:
    """What clients were told was done, against what Postgres holds: (lost, duplicated)."""
    ledger = await db.fetch(
        "SELECT request_id, kind, amount FROM credit_ledger WHERE workspace_id = $1", workspace_id
    )
    kinds: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in ledger:
        kinds[row["request_id"]][row["kind"]] += 1
    charged_ok = [a for a in recorder.of("rest") if a.status == 200]
    balance = await db.fetchval(
        "SELECT balance FROM credit_balances WHERE workspace_id = $1", workspace_id
    )
    ledger_drift = int(balance != sum(row["amount"] for row in ledger))
    messages = await db.fetch(
        "SELECT m.id, m.role, m.parts, m.run_id FROM chat_messages m WHERE m.workspace_id = $1",
        workspace_id,
    )
    ids = {str(m["id"]) for m in messages}
    questions = collections.Counter(
        "".join(p.get("text", "") for p in m["parts"]) for m in messages if m["role"] == "user"
    )
    turns_ok = [a for a in recorder.of("chat") if _ok(a)]
    runs = await db.fetch(
        "SELECT r.id, r.status, count(m.id) FILTER (WHERE m.role = 'assistant') AS answers "
        "FROM automation_runs r LEFT JOIN chat_messages m ON m.run_id = r.id "
        "WHERE r.workspace_id = $1 GROUP BY r.id",
        workspace_id,
    )
    lost = {
        "messages": sum(a.message_id not in ids or questions[a.text or ""] == 0 for a in turns_ok),
        "ledger": sum(kinds[a.call_id or ""] != {"reserve": 1, "settle": 1} for a in charged_ok)
        + ledger_drift,
        "runs": sum(r["status"] == "succeeded" and r["answers"] == 0 for r in runs)
        + sum(r["status"] in ("queued", "running") for r in runs),
    }
    duplicated = {
        "messages": sum(count > 1 for text, count in questions.items() if "?n=" in text),
        "ledger": sum(any(n > 1 for n in c.values()) for c in kinds.values()),
        "runs": sum(r["answers"] > 1 for r in runs),
    }
    return lost, duplicated
