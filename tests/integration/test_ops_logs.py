"""Logs an operator can follow (request id from the web into the worker) and that leak nothing."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lookout import app, broker, logs
from lookout.access.principals import Principal
from lookout.db import repo
from lookout.settings import Settings
from lookout.watches import service
from tests.integration import sse, workers
from tests.integration.accounts_helpers import (
    Member,
    api_key_fixture,
    new_client_fixture,
    signed_up_fixture,
)
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_watches import make_watch, page, wait_run

__all__ = ["api_key_fixture", "new_client_fixture", "page", "signed_up_fixture", "tenant_factory"]

REQUEST_ID = "ops-trace-0001abcd"
PASSWORD = "Ops-Secret-Passw0rd-7e1"
PAGE_MARKER = "PAGE-BODY-MARKER-5b2d"


@pytest.fixture
async def client(aiohttp_client: Any, settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(settings))


def json_lines(log: Path) -> list[dict[str, Any]]:
    """The worker's log lines that our formatter wrote (Dramatiq's own parent lines are text)."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        start = line.find("{")
        if start >= 0:
            try:
                found.append(json.loads(line[start:]))
            except ValueError:
                continue
    return found


async def test_a_run_now_is_followed_by_its_request_id_into_the_worker(
    client: Any,
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    page: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a watch and a worker that logs JSON lines
    monkeypatch.setenv("LOOKOUT_LOG_FORMAT", "json")
    tenant = await tenant_factory(credits=20)
    watch = await make_watch(db, settings, tenant, page["url"])
    broker.setup(settings)
    with workers.running_worker(settings, processes=1, threads=2) as log:
        # When someone asks for a run now, naming their request
        response = await client.post(
            f"/api/automations/{watch.id}/run",
            headers={**tenant.headers, "X-Request-Id": REQUEST_ID},
        )
        assert response.status == 202
        run_id = (await response.json())["data"]["run_id"]
        await wait_run(db, watch.id, 1)

    # Then every worker line about that run carries the request id, down to the turn
    about_run = [line for line in json_lines(log) if line.get("run_id") == run_id]
    assert about_run, log.read_text()[-3000:]
    assert {line["request_id"] for line in about_run} == {REQUEST_ID}
    assert any(line["message"] == "watch run succeeded" for line in about_run)
    turn_lines = [line for line in about_run if "turn_id" in line]
    assert any(line["message"].startswith("turn succeeded (automation)") for line in turn_lines)
    assert all(line["chat_id"] == str(watch.chat_id) for line in turn_lines)


class Capture(logging.Handler):
    """Everything logged at DEBUG: as formatted for operators, and our own raw messages."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.formatted = io.StringIO()
        self.raw: list[str] = []
        self.formatter_ = logs.JsonFormatter()
        self.addFilter(logs.ContextFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.formatted.write(self.formatter_.format(record) + "\n")
        if record.name.startswith("lookout"):
            self.raw.append(record.getMessage())


@pytest.fixture
def captured() -> Iterator[Capture]:
    handler = Capture()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(previous)


async def test_no_key_session_password_or_page_body_reaches_the_logs(
    captured: Capture,
    signed_up: Callable[..., Awaitable[Member]],
    api_key: Callable[..., Awaitable[dict[str, Any]]],
    db: asyncpg.Pool,
    settings: Settings,
    page: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a person who signs up, signs in (once wrongly), makes a key and uses every door
    page["lines"] = [PAGE_MARKER, "Fresh bread"]
    member = await signed_up(password=PASSWORD)
    web = member.client
    bad = await web.post(
        "/api/auth/login", json={"email": member.email, "password": "x" + PASSWORD}
    )
    assert bad.status == 401
    good = await web.post("/api/auth/login", json={"email": member.email, "password": PASSWORD})
    assert good.status == 200
    cookie = next(c.value for c in web.session.cookie_jar if c.key == "lookout_session")
    key = (await api_key(member))["key"]
    bearer = {"Authorization": f"Bearer {key}"}
    assert (await web.post("/v1/web/scrape", json={"url": page["url"]}, headers=bearer)).ok
    refused = {"Authorization": f"Bearer {key[:-4]}zzzz"}
    assert (
        await web.post("/v1/web/scrape", json={"url": page["url"]}, headers=refused)
    ).status == 401
    chat = await (await web.post("/api/chats", json={}, headers=bearer)).json()
    turn = await sse.stream(
        str(web.make_url("")).rstrip("/"), "POST", f"/api/chats/{chat['data']['id']}/messages",
        headers=bearer, json_body={"text": f"what is on {page['url']} right now?"},
    )  # fmt: skip
    assert PAGE_MARKER in turn.text
    # And a watch of theirs runs on a worker logging at DEBUG
    monkeypatch.setenv("LOOKOUT_LOG_LEVEL", "DEBUG")
    owner = Principal(kind="session", workspace_id=member.workspace_id, role="owner",
                      user_id=member.user_id)  # fmt: skip
    watched = await repo.insert_chat(
        db, workspace_id=member.workspace_id, created_by=member.user_id, title="menu"
    )
    watch = await service.create(
        db, settings, owner, chat=watched, message=f"what is on {page['url']}", cadence="0 * * * *"
    )
    broker.setup(settings)
    with workers.running_worker(settings, processes=1, threads=2) as log:
        await service.run_now(db, owner, watch.id)
        await wait_run(db, watch.id, 1)

    # Then neither the web's nor the worker's logs hold any of it
    web_logs = captured.formatted.getvalue()
    worker_logs = log.read_text(errors="replace")
    assert "watch run succeeded" in worker_logs and "turn succeeded" in web_logs
    for secret in (PASSWORD, key, key[3:], cookie, settings.secret_key, PAGE_MARKER):
        assert secret not in web_logs
        assert secret not in worker_logs
        assert not any(secret in message for message in captured.raw)
