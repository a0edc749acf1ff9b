"""SIGTERM during a turn: it completes, or is cut off cleanly and requeued; never half-written."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web

from lookout import broker, devservices
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import sse, workers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_watches import make_watch, manual_run, wait_run

__all__ = ["tenant_factory"]


@pytest.fixture
async def slow_page(aiohttp_server: Any) -> dict[str, Any]:
    """A page that answers after `delay` seconds."""
    state: dict[str, Any] = {"delay": 0.0}

    async def handle(request: web.Request) -> web.Response:
        await asyncio.sleep(state["delay"])
        body = "<html><head><title>Menu</title></head><body><main><h1>Menu</h1>"
        return web.Response(
            text=body + "<p>Soup</p></main></body></html>", content_type="text/html"
        )

    server_app = web.Application()
    server_app.router.add_get("/menu", handle)
    state["url"] = str((await aiohttp_server(server_app)).make_url("/menu"))
    return state


@contextlib.contextmanager
def started(settings: Settings, *command: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """`lookout <command>` as its own process; killed if the test did not stop it."""
    log = Path(tempfile.mkstemp(prefix="lookout-ops-", suffix=".log")[1])
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "lookout.cli", *command],
            env={**workers.env_for(settings), **env}, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, as a Procfile host starts it
        )  # fmt: skip
        process.log = log  # type: ignore[attr-defined]
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


async def stop(process: subprocess.Popen[bytes], within: float, *, group: bool = False) -> int:
    """SIGTERM, then the exit code (the process must be gone within `within` seconds). With
    `group`, to every process of its group at once, as honcho and Heroku stop a dyno's."""
    if group:
        os.killpg(process.pid, signal.SIGTERM)
    else:
        process.send_signal(signal.SIGTERM)
    return await asyncio.wait_for(asyncio.to_thread(process.wait), within)


async def until(check: Any, seconds: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def run_status(db: asyncpg.Pool, run_id: uuid.UUID | None) -> str:
    return str(await db.fetchval("SELECT status FROM automation_runs WHERE id = $1", run_id))


async def messages(db: asyncpg.Pool, chat_id: uuid.UUID | str) -> list[tuple[str, str]]:
    rows = await db.fetch(
        "SELECT role, parts FROM chat_messages WHERE chat_id = $1 ORDER BY seq",
        uuid.UUID(str(chat_id)),
    )
    text = ["".join(p.get("text", "") for p in row["parts"] if p["type"] == "text") for row in rows]
    return [(row["role"], said) for row, said in zip(rows, text, strict=True)]


def worker_command() -> tuple[str, ...]:
    return ("worker", "--processes", "1", "--threads", "2")


@pytest.mark.parametrize("group", [False, True], ids=["main-process", "process-group"])
async def test_a_worker_stopped_mid_turn_finishes_it_within_the_grace_period(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    slow_page: dict[str, Any],
    group: bool,
) -> None:
    # Given a scheduled turn running on a worker, reading a page that takes 3 s
    slow_page["delay"] = 3.0
    watch = await make_watch(db, settings, await tenant_factory(), slow_page["url"])
    run_id = await manual_run(db, watch)
    broker.setup(settings)
    with started(settings, *worker_command(), LOOKOUT_SHUTDOWN_GRACE_S="30") as worker:
        await asyncio.to_thread(broker.setup(settings).get_actor("chat_message").send, str(run_id))
        await until(lambda: _is(db, run_id, "running"))

        # When the worker is told to stop: its main process, or (a Procfile host) every
        # process of it, each worker process then hearing it twice (the parent forwards it)
        code = await stop(worker, within=40, group=group)

    # Then it finished the turn first: the run succeeded and the answer is stored
    assert code == 0, worker.log.read_text()[-2000:]  # type: ignore[attr-defined]
    assert await run_status(db, run_id) == "succeeded"
    assert [role for role, _ in await messages(db, watch.chat_id)] == ["user", "assistant"]


async def test_a_turn_past_the_grace_period_is_requeued_and_answered_once(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, slow_page: dict[str, Any]
) -> None:
    # Given a scheduled turn that would take longer than the worker's grace period
    slow_page["delay"] = 15.0
    watch = await make_watch(db, settings, await tenant_factory(), slow_page["url"])
    run_id = await manual_run(db, watch)
    broker.setup(settings)
    with started(settings, *worker_command(), LOOKOUT_SHUTDOWN_GRACE_S="1") as worker:
        await asyncio.to_thread(broker.setup(settings).get_actor("chat_message").send, str(run_id))
        await until(lambda: _is(db, run_id, "running"))

        # When the worker is stopped mid-turn
        code = await stop(worker, within=30)

    # Then the run is back in the queue, the chat holds no answer yet, and its lease is free
    assert code == 0, worker.log.read_text()[-2000:]  # type: ignore[attr-defined]
    assert await run_status(db, run_id) == "queued"
    assert [role for role, _ in await messages(db, watch.chat_id)] == ["user"]
    assert await repo.chat_busy_until(db, chat_id=watch.chat_id) is None
    # And the next worker answers it exactly once (Dramatiq's retry carries the message)
    slow_page["delay"] = 0.0
    with workers.running_worker(settings, processes=1, threads=2):
        runs = await wait_run(db, watch.id, 1)
    assert [run.status for run in runs] == ["succeeded"]
    assert [role for role, _ in await messages(db, watch.chat_id)] == ["user", "assistant"]


async def _is(db: asyncpg.Pool, run_id: uuid.UUID | None, status: str) -> bool:
    return await run_status(db, run_id) == status


@contextlib.asynccontextmanager
async def web_process(settings: Settings, grace_s: str) -> Any:
    port = devservices.free_port()
    with started(settings, "web", PORT=str(port), LOOKOUT_HOST="127.0.0.1",
                 LOOKOUT_SHUTDOWN_GRACE_S=grace_s) as process:  # fmt: skip
        base = f"http://127.0.0.1:{port}"

        async def ready() -> bool:
            try:
                async with aiohttp.ClientSession() as http, http.get(base + "/healthz") as got:
                    return got.status == 200
            except aiohttp.ClientError:
                return False

        await until(ready, 30)
        yield process, base


async def turn_during_shutdown(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, url: str, grace_s: str
) -> tuple[int, sse.Stream, str]:
    """Start a chat turn on a real web process, SIGTERM it mid-turn; (exit code, stream, chat)."""
    tenant = await tenant_factory()
    async with web_process(settings, grace_s) as (process, base):
        async with aiohttp.ClientSession() as http:
            created = await http.post(base + "/api/chats", json={}, headers=tenant.headers)
            chat_id = (await created.json())["data"]["id"]
        turn = asyncio.create_task(sse.stream(
            base, "POST", f"/api/chats/{chat_id}/messages", headers=tenant.headers,
            json_body={"text": f"what is on {url} right now?"},
        ))  # fmt: skip
        await until(lambda: _has_user_message(db, chat_id))
        code = await stop(process, within=float(grace_s) + 20)
        stream = await asyncio.wait_for(turn, 10)
    return code, stream, chat_id


async def _has_user_message(db: asyncpg.Pool, chat_id: str) -> bool:
    return bool(await messages(db, chat_id))


async def test_the_web_finishes_a_turn_in_flight_before_it_exits(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, slow_page: dict[str, Any]
) -> None:
    slow_page["delay"] = 3.0

    code, stream, chat_id = await turn_during_shutdown(
        db, settings, tenant_factory, slow_page["url"], grace_s="30"
    )

    assert code == 0
    assert stream.types[0] == "start" and stream.types[-1] == "finish"
    assert stream.events[-1][1] == "[DONE]"
    assert [role for role, _ in await messages(db, chat_id)] == ["user", "assistant"]


async def test_the_web_cuts_off_a_turn_past_the_grace_period_with_an_answer(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, slow_page: dict[str, Any]
) -> None:
    slow_page["delay"] = 15.0

    code, stream, chat_id = await turn_during_shutdown(
        db, settings, tenant_factory, slow_page["url"], grace_s="1"
    )

    assert code == 0
    assert stream.parts[-1]["type"] == "error" and stream.parts[-1]["errorText"]
    stored = await messages(db, chat_id)
    assert [role for role, _ in stored] == ["user", "assistant"]
    assert "interrupted" in stored[1][1]
    assert await repo.chat_busy_until(db, chat_id=uuid.UUID(chat_id)) is None
