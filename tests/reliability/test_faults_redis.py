"""Redis restarted under traffic: clear envelopes meanwhile, SSE listeners resume without a gap,
the scheduler survives a tick that finds Redis down, dispatch resumes, no run runs twice.

Real web, worker and scheduler processes; the test's own redis-server is stopped with SIGTERM
(so it saves) and started again on the same port. The scheduler is started while Redis is down:
it ticks once at start-up (lookout.ticks), so its tick surely meets the outage (the same code
path as the minute tick, without waiting for a minute boundary).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
import uuid
from typing import Any

import aiohttp
import httpx
import pytest
import redis.asyncio as aioredis
from aiohttp import web
from httpx_sse import aconnect_sse

from lookout import redis_client
from lookout.access import ratelimit
from lookout.chat import events, stream_ids
from tests.reliability import faults_load, faults_report, faults_stack, faults_watches
from tests.reliability.conftest import FaultStack

pytestmark = pytest.mark.slow

TITLE = "Redis restarted under traffic"
WHAT = (
    "Real web and worker; REST loops (web.scrape, list chats, run a watch now), a chat loop, 6 "
    "SSE listeners on 3 watched chats (half hang up and reconnect with Last-Event-ID during the "
    "outage). Redis stopped (SIGTERM) for 6 s; the scheduler is started meanwhile so its tick "
    "meets the outage. Held: a success or an envelope / error part with a code (never a 500)."
)

WATCHES = 3
LISTENERS = 2  # per watched chat
DOWN_S = 6.0
RECOVERY_S = 10.0
RUN_LEASE_S = 6.0  # production 90 s (faults_worker): runs cut by the outage are swept in-test


@pytest.fixture
async def page(aiohttp_server: Any) -> str:
    async def handle(request: web.Request) -> web.Response:
        await asyncio.sleep(0.5)
        html = f"<html><head><title>Board</title></head><body><main><p>{time.time()}</p></main>"
        return web.Response(text=html + "</body></html>", content_type="text/html")

    server_app = web.Application()
    server_app.router.add_get("/board", handle)
    return str((await aiohttp_server(server_app)).make_url("/board"))


class Listener:
    """GET /api/chats/{id}/events, reconnecting with Last-Event-ID whenever the stream drops
    (or when told to hang up: `drop`)."""

    def __init__(self, base: str, key: str, chat_id: uuid.UUID) -> None:
        self.base, self.key, self.chat_id = base, key, chat_id
        self.ids: list[str] = []
        self.connects = 0
        self.refused: collections.Counter[int] = collections.Counter()
        self.stop, self.drop = asyncio.Event(), asyncio.Event()

    async def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        async with httpx.AsyncClient(base_url=self.base, headers=headers, timeout=30) as client:
            while not self.stop.is_set():
                reading = asyncio.create_task(self._read(client))
                dropping = asyncio.create_task(self.drop.wait())
                await asyncio.wait({reading, dropping}, return_when=asyncio.FIRST_COMPLETED)
                self.drop.clear()
                for task in (reading, dropping):
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError, ValueError):
                    await reading
                await asyncio.sleep(0.5)

    async def _read(self, client: httpx.AsyncClient) -> None:
        resume = {"Last-Event-ID": self.ids[-1]} if self.ids else {}
        path = f"/api/chats/{self.chat_id}/events"
        async with aconnect_sse(client, "GET", path, headers=resume) as source:
            if source.response.status_code != 200:
                self.refused[source.response.status_code] += 1
                return
            self.connects += 1
            async for event in source.aiter_sse():
                if self.stop.is_set():
                    return
                if event.id and event.data:  # (httpx-sse reports pings as empty events)
                    self.ids.append(event.id)


async def start_processes(stack: FaultStack) -> tuple[list[faults_stack.Proc], str]:
    web_proc, base = await faults_stack.web(stack.procs)
    worker = stack.procs.worker(threads=4, LOOKOUT_FAULTS_RUN_LEASE_S=str(RUN_LEASE_S))

    async def ready() -> bool:
        return "Worker process is ready" in worker.log.read_text(errors="replace")

    await faults_stack.until(ready, 60, worker)
    return [web_proc, worker], base


async def other_rest_loop(
    recorder: faults_load.Recorder, base: str, key: str, watch_id: uuid.UUID
) -> None:
    """Routes that need no queue (list chats), and one that does (run a watch now)."""
    headers = {"Authorization": f"Bearer {key}"}
    calls = [("list", "GET", "/api/chats"), ("run-now", "POST", f"/api/automations/{watch_id}/run")]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        n = 0
        while not recorder.stop.is_set():
            kind, method, path = calls[n % 2] if n % 10 == 0 else calls[0]
            answer = faults_load.Answer(kind, time.monotonic(), 0.0, 0)
            try:
                async with http.request(method, base + path, headers=headers) as response:
                    answer.status = response.status
                    body = await response.json(content_type=None)
                answer.code = (body.get("error") or {}).get("code")
            except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError) as exc:
                answer.code = f"client:{type(exc).__name__}"
            answer.done = time.monotonic()
            recorder.answers.append(answer)
            n += 1
            await asyncio.sleep(0.2)


@pytest.mark.timeout(240)
async def test_redis_restart_under_traffic(fault_stack: FaultStack, page: str) -> None:
    # Given web, worker and scheduler; listeners on every watched chat; REST and chat traffic
    stack = fault_stack
    user_id, workspace_id, (key,) = await stack.tenant(credits=100_000)
    watches = await faults_watches.make_watches(
        stack.db, stack.settings, user_id, workspace_id, f"what is on {page}", WATCHES
    )
    watch_ids = [w.id for w in watches]
    procs, base = await start_processes(stack)
    listeners = [Listener(base, key, w.chat_id) for w in watches for _ in range(LISTENERS)]
    listening = [asyncio.create_task(listener.run()) for listener in listeners]
    await faults_stack.until(lambda: _all_connected(listeners), 30)
    recorder = faults_load.Recorder()
    tasks = recorder.start(
        faults_load.rest_loop(recorder, base, key, page, 0.2),
        other_rest_loop(recorder, base, key, watch_ids[0]),
        faults_load.chat_loop(recorder, base, key, page, 0.2),
    )
    before = await fire_and_wait(stack, watch_ids)

    # When Redis stops, with every watch due, and the scheduler starts meanwhile (its first
    # tick finds Redis down), and Redis starts again 6 s later (at least 2 s after that tick)
    known = {row["id"] for row in await faults_watches.runs(stack.db, watch_ids)}
    await faults_watches.make_due(stack.db, watch_ids)
    await asyncio.to_thread(stack.cluster.redis.stop)
    down = time.monotonic()
    for listener in listeners[::2]:  # half hang up and reconnect while Redis is down
        listener.drop.set()
    scheduler = stack.procs.lookout("scheduler", "scheduler")
    procs.append(scheduler)
    await faults_stack.until(lambda: _ticked(scheduler), 60, scheduler)
    await asyncio.sleep(max(2.0, DOWN_S - (time.monotonic() - down)))
    starting = time.monotonic()
    await asyncio.to_thread(stack.cluster.redis.start)
    back = time.monotonic()

    # Then the scheduler's tick, sent once Redis is back, dispatches every due watch once
    after = await faults_watches.new_runs(stack.db, watch_ids, known, RECOVERY_S + 10)
    dispatched_s = time.monotonic() - back
    await faults_watches.wait_statuses(
        stack.db, after, faults_watches.TERMINAL, 60, settings=stack.settings
    )
    await asyncio.sleep(3)  # the listeners read the last events
    await faults_load.stop(recorder, tasks, faults_load.TURN_LIMIT_S + 5)
    for listener in listeners:
        listener.stop.set()
    await asyncio.wait(listening, timeout=10)
    for task in listening:
        task.cancel()

    figures = await judge(stack, recorder, listeners, watches, (down, starting, back))
    figures.update(
        runs_before=len(before), runs_after=len(after), dispatch_resumed_s=round(dispatched_s, 1),
        processes_alive={p.name: p.alive for p in procs},
        scheduler_first_tick_met_outage=True,  # (waited for above)
    )  # fmt: skip
    faults_report.write("redis-restart", figures, title=TITLE, what=WHAT)
    assert all(figures["processes_alive"].values()), [p.tail() for p in procs]
    assert figures["unclear_answers"] == [] and figures["hung_turns"] == 0, figures
    assert figures["list_chats_during_outage"].get("200", 0) > 0, figures
    assert figures["listener_gaps"] == 0 and figures["listener_duplicates"] == 0, figures
    assert all(n >= 1 for n in figures["listener_events_after_outage"]), figures
    assert figures["listener_reconnects"] >= len(listeners) // 2, figures
    assert figures["runs_run_twice"] == 0 and figures["runs_left_open"] == 0, figures
    assert figures["failed_after_recovery"] == 0, figures
    assert figures["dispatch_resumed_s"] <= RECOVERY_S, figures


async def test_a_process_redis_client_carries_on_after_a_restart(tmp_path: Any) -> None:
    # Given a process's client with five pooled connections
    server = faults_stack.Redis(tmp_path / "redis")
    client = redis_client.connect(server.url)
    try:
        await asyncio.gather(*(client.ping() for _ in range(5)))
        # When redis-server restarts
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        # Then the next commands reconnect instead of failing on the dead connections
        answers = await asyncio.gather(*(client.ping() for _ in range(5)), return_exceptions=True)
    finally:
        await client.aclose()
        server.stop()
    assert answers == [True] * 5


async def _ticked(scheduler: faults_stack.Proc) -> bool:
    return "Scheduling " in scheduler.log.read_text(errors="replace")


async def _all_connected(listeners: list[Listener]) -> bool:
    return all(listener.connects for listener in listeners)


async def fire_and_wait(
    stack: FaultStack, watch_ids: list[uuid.UUID], seconds: float = 30
) -> list[uuid.UUID]:
    """Make every watch due, tick the dispatcher (again, until it answers); wait the runs out."""
    known = {row["id"] for row in await faults_watches.runs(stack.db, watch_ids)}
    await faults_watches.make_due(stack.db, watch_ids)
    deadline = time.monotonic() + seconds
    fresh: list[uuid.UUID] = []
    while time.monotonic() < deadline and len(fresh) < len(watch_ids):
        await faults_watches.tick(stack.settings)
        await asyncio.sleep(1.0)
        fresh = [r["id"] for r in await faults_watches.runs(stack.db, watch_ids)]
        fresh = [run_id for run_id in fresh if run_id not in known]
    await faults_watches.wait_statuses(
        stack.db, fresh, faults_watches.TERMINAL, seconds, settings=stack.settings
    )
    return fresh


async def judge(
    stack: FaultStack,
    recorder: faults_load.Recorder,
    listeners: list[Listener],
    watches: list[Any],
    window: tuple[float, float, float],
) -> dict[str, Any]:
    down, starting, back = window
    answers = recorder.answers
    during = [a for a in answers if down <= a.sent < starting]
    gaps, duplicates, fresh = await _listener_books(stack, listeners, back)
    runs = await stack.db.fetch(
        "SELECT r.id, r.status, count(m.id) FILTER (WHERE m.role = 'assistant') AS answers "
        "FROM automation_runs r LEFT JOIN chat_messages m ON m.run_id = r.id "
        "WHERE r.automation_id = ANY($1::uuid[]) GROUP BY r.id",
        [w.id for w in watches],
    )
    return {
        "down_s": round(starting - down, 1),
        "tried": len(answers),
        "held": sum(_clear(a) for a in answers),
        "during_outage": dict(collections.Counter(f"{a.kind} {a.status} {a.code}" for a in during)),
        "list_chats_during_outage": dict(
            collections.Counter(str(a.status) for a in during if a.kind == "list")
        ),
        "unclear_answers": [
            f"{a.kind} {a.status} {a.code} at {a.sent - down:+.1f} s"
            for a in answers
            if not _clear(a)
        ],
        "hung_turns": sum(a.hung for a in answers),
        "failed_after_recovery": sum(
            not _clear(a) or a.status != 200 for a in answers if a.sent >= back + RECOVERY_S
        ),
        "listeners": len(listeners),
        "listener_reconnects": sum(listener.connects - 1 for listener in listeners),
        "listener_refusals": dict(
            sum((listener.refused for listener in listeners), start=collections.Counter())
        ),
        "listener_gaps": gaps,
        "listener_duplicates": duplicates,
        "listener_events_after_outage": fresh,
        "runs": dict(collections.Counter(r["status"] for r in runs)),
        "runs_run_twice": sum(r["answers"] > 1 for r in runs),
        "runs_left_open": sum(r["status"] in ("queued", "running") for r in runs),
    }


def _clear(answer: faults_load.Answer) -> bool:
    """A success, or an error envelope / part with a code a client can act on (never a 500)."""
    if answer.hung or (answer.code or "").startswith("client:"):
        return False
    if answer.status == 200:
        return answer.kind != "chat" or answer.finished or answer.code is not None
    return answer.status in (202, 503, 409) and answer.code not in (None, "internal")


async def _listener_books(
    stack: FaultStack, listeners: list[Listener], back: float
) -> tuple[int, int, list[int]]:
    """(ids missed, ids received twice, events received after Redis came back) per listener,
    against what the chat's stream in Redis holds after each listener's first event."""
    client = events_client(stack)
    gaps = duplicates = 0
    fresh = []
    try:
        for listener in listeners:
            stored: Any = await client.xrange(events.stream_key(listener.chat_id))
            ids = [entry_id.decode() for entry_id, _ in stored]
            expected = [i for i in ids if listener.ids and stream_ids.key(i) >= stream_ids.key(
                listener.ids[0])]  # fmt: skip
            gaps += len(set(expected) - set(listener.ids))
            duplicates += len(listener.ids) - len(set(listener.ids))
            fresh.append(sum(stream_ids.key(i)[0] / 1000 > _wall(back) for i in listener.ids))
    finally:
        await client.aclose()
    return gaps, duplicates, fresh


def _wall(monotonic: float) -> float:
    return time.time() - (time.monotonic() - monotonic)


def events_client(stack: FaultStack) -> Any:
    return aioredis.Redis.from_url(stack.settings.redis_url)


async def test_a_process_scripts_carry_on_after_a_restart(tmp_path: Any) -> None:
    # Given a process's client whose script lane has five connections
    server = faults_stack.Redis(tmp_path / "redis")
    client = redis_client.connect(server.url)
    subject = f"key:{uuid.uuid4()}"
    try:
        await asyncio.gather(*(ratelimit.hit(client, subject=subject, limit=100) for _ in range(5)))
        assert len(client.lane.idle) == 5
        # When redis-server restarts (its connections gone, its scripts forgotten)
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        # Then the next calls are answered (through redis-py's retries), each counted once
        decisions = await asyncio.gather(
            *(ratelimit.hit(client, subject=subject, limit=100) for _ in range(5)),
            return_exceptions=True,
        )
        again = await ratelimit.hit(client, subject=subject, limit=100)
    finally:
        await client.aclose()
        server.stop()
    assert all(isinstance(d, ratelimit.Decision) for d in decisions), decisions
    assert sorted(d.remaining for d in decisions) == [90, 91, 92, 93, 94]  # type: ignore[union-attr]
    assert again.remaining == 89
