"""The watches page and a watch's history over REST: rows with last checked / last changed and
status, bulk controls, the checks of a watch, the page at a check and its diff, retention, the
workspace's time zone and the browser's."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import json
import uuid
import zoneinfo
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
from aiohttp import web

from lookout import app
from lookout.access.services import Services
from lookout.agent import graph
from lookout.capabilities import fetch
from lookout.chat import events
from lookout.db import checkpointer, repo
from lookout.db import history as history_db
from lookout.routes import openapi_board as board_schema
from lookout.settings import Settings
from lookout.watches import history, runner
from tests.integration import sse
from tests.integration.factories import Tenant, TenantFactory, tenant_factory

__all__ = ["tenant_factory"]

ARTICLES = Path(__file__).resolve().parents[1] / "corpus" / "articles" / "ground-truth.json.gz"


@pytest.fixture
async def page(aiohttp_server: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"lines": ["Soup of the day", "Fresh bread"]}

    async def handle(request: web.Request) -> web.Response:
        items = "".join(f"<li>{line}</li>" for line in state["lines"])
        html = "<html><head><title>Menu</title></head><body><main><h1>Menu</h1>"
        return web.Response(text=f"{html}<ul>{items}</ul></main></body></html>",
                            content_type="text/html")  # fmt: skip

    server_app = web.Application()
    server_app.router.add_get("/menu", handle)
    server = await aiohttp_server(server_app)
    state["url"] = str(server.make_url("/menu"))
    return state


@dataclasses.dataclass
class Stack:
    services: Services
    graph: graph.Graph
    client: Any

    async def call(self, method: str, path: str, tenant: Tenant, **kwargs: Any) -> Any:
        response = await self.client.request(method, path, headers=tenant.headers, **kwargs)
        return response.status, await response.json()

    async def watch(self, tenant: Tenant, text: str, **body: Any) -> dict[str, Any]:
        """A watch started the way a person does: a chat message."""
        _, created = await self.call("POST", "/api/chats", tenant, json={})
        chat_id = created["data"]["id"]
        base = str(self.client.make_url("")).rstrip("/")
        await sse.stream(base, "POST", f"/api/chats/{chat_id}/messages",
                         headers=tenant.headers, json_body={"text": text, **body})  # fmt: skip
        _, listed = await self.call("GET", "/api/watches", tenant)
        [row] = [w for w in listed["data"]["watches"] if w["chat_id"] == chat_id]
        return dict(row)

    async def check(self, watch_id: str) -> uuid.UUID:
        """A manual run, executed here; returns its id."""
        automation_id = uuid.UUID(watch_id)
        found = await self.services.db.fetchrow(
            "SELECT workspace_id FROM automations WHERE id = $1", automation_id
        )
        run_id = await repo.insert_run(
            self.services.db, automation_id=automation_id, workspace_id=found["workspace_id"],
            scheduled_for=dt.datetime.now(dt.UTC), manual=True,
        )  # fmt: skip
        assert run_id is not None
        assert await runner.execute(self.services, self.graph, run_id) == "succeeded"
        return run_id


@pytest.fixture
async def stack(
    settings: Settings, redis_url: str, db: asyncpg.Pool, aiohttp_client: Any
) -> AsyncIterator[Stack]:
    redis = aioredis.Redis.from_url(redis_url)
    async with (
        fetch.open_session(settings) as http,
        checkpointer.saver_context(settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=settings)
        client = await aiohttp_client(app.create_app(settings))
        yield Stack(services, graph.build(saver), client)
    await redis.aclose()


async def test_the_watches_page_shows_last_checked_and_last_changed_after_runs(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    # Given two watches of one workspace, each checked twice, the menu changing before check 2
    tenant = await tenant_factory()
    menu = await stack.watch(tenant, f"watch {page['url']} every day")
    other = await stack.watch(tenant, f"keep an eye on {page['url']}?v=2 hourly")
    await stack.check(menu["id"])
    await stack.check(other["id"])
    page["lines"] = ["Soup of the day", "Apple tart"]
    await stack.check(menu["id"])
    changed_at = dt.datetime.now(dt.UTC)

    # When the watches page is read
    status, body = await stack.call("GET", "/api/watches", tenant)

    # Then both rows are there, the menu's last change is its second check, the other's never
    assert status == 200, body
    assert board_schema.WatchRows().validate(body["data"]) == {}  # as documented in OpenAPI
    rows = {row["id"]: row for row in body["data"]["watches"]}
    assert set(rows) == {menu["id"], other["id"]}
    first, second = rows[menu["id"]], rows[other["id"]]
    assert first["status"] == second["status"] == "ok"
    assert first["page_title"] == "Menu" and first["url"] == page["url"]
    assert first["last_changed_at"] is not None and second["last_changed_at"] is None
    assert dt.datetime.fromisoformat(first["last_changed_at"]) <= changed_at
    assert dt.datetime.fromisoformat(second["last_checked_at"]) < dt.datetime.fromisoformat(
        first["last_checked_at"]
    )
    assert first["schedule"] and first["next_run_at"]


async def test_history_lists_checks_and_opens_the_diff_of_a_past_check(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    watch = await stack.watch(tenant, f"watch {page['url']} every day")
    one = await stack.check(watch["id"])
    page["lines"] = ["Soup of the day", "Apple tart"]
    two = await stack.check(watch["id"])
    three = await stack.check(watch["id"])

    status, body = await stack.call("GET", f"/api/automations/{watch['id']}/history", tenant)
    assert status == 200, body
    assert board_schema.History().validate(body["data"]) == {}
    checks = body["data"]["checks"]
    assert [c["id"] for c in checks] == [str(three), str(two), str(one)]
    assert [c["changed"] for c in checks] == [False, True, False]
    assert all(c["credits"] == 1 and c["pages"] == 1 for c in checks)
    assert body["data"]["pruned"] is None

    # The past check 2, against its previous check (1): the page then and the edit
    status, body = await stack.call("GET", f"/api/automations/{watch['id']}/history/{two}", tenant)
    assert status == 200, body
    assert board_schema.CheckDetail().validate(body["data"]) == {}
    [shown] = body["data"]["pages"]
    assert body["data"]["against"]["id"] == str(one)
    assert "Apple tart" in shown["content"] and "Fresh bread" not in shown["content"]
    assert shown["diff"]["changed"] is True
    said = "\n".join(shown["diff"]["lines"])
    assert "Fresh bread" in said and "Apple tart" in said

    # Check 3 against check 2 (picked): no change; check 1's page is the old menu
    _, same = await stack.call(
        "GET", f"/api/automations/{watch['id']}/history/{three}?against={two}", tenant
    )
    assert same["data"]["pages"][0]["diff"]["changed"] is False
    _, old = await stack.call("GET", f"/api/automations/{watch['id']}/history/{one}", tenant)
    assert "Fresh bread" in old["data"]["pages"][0]["content"]
    assert old["data"]["against"] is None and old["data"]["pages"][0]["diff"] is None

    # Two distinct contents for three checks: the unchanged one is stored once
    count = await stack.services.db.fetchval(
        "SELECT count(*) FROM page_contents WHERE automation_id = $1", uuid.UUID(watch["id"])
    )
    assert count == 2


async def test_history_is_scoped_to_the_workspace(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    mine, theirs = await tenant_factory(), await tenant_factory()
    watch = await stack.watch(mine, f"watch {page['url']} every day")
    run_id = await stack.check(watch["id"])
    paths = [
        f"/api/automations/{watch['id']}/history",
        f"/api/automations/{watch['id']}/history/{run_id}",
    ]
    for path in paths:
        status, body = await stack.call("GET", path, theirs)
        assert status == 404 and body["error"]["code"] == "not_found", path
    _, listed = await stack.call("GET", "/api/watches", theirs)
    assert listed["data"]["watches"] == []
    status, body = await stack.call(
        "POST", "/api/watches/bulk", theirs, json={"action": "stop", "ids": [watch["id"]]}
    )
    assert status == 404 and body["error"]["code"] == "not_found"
    assert await stack.services.db.fetchval("SELECT count(*) FROM automations") == 1
    # Another watch's check is not a check of this one
    other = await stack.watch(mine, f"watch {page['url']}?b hourly")
    status, _ = await stack.call("GET", f"/api/automations/{other['id']}/history/{run_id}", mine)
    assert status == 404


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/automations/{id}/history?limit=0", None),
        ("GET", "/api/automations/{id}/history?limit=x", None),
        ("GET", "/api/automations/{id}/history?before=yesterday", None),
        ("GET", "/api/automations/{id}/history?nope=1", None),
        ("GET", "/api/automations/{id}/history/{id}?against=nope", None),
        ("POST", "/api/watches/bulk", {"action": "explode", "ids": []}),
        ("POST", "/api/watches/bulk", {"action": "run", "ids": ["x"]}),
        ("POST", "/api/watches/bulk", {"action": "run", "ids": [str(uuid.uuid4())] * 101}),
        ("POST", "/api/watches/bulk", {"action": "run", "ids": [], "more": 1}),
        ("POST", "/api/watches/bulk", [1, 2]),
        ("PATCH", "/api/workspaces/{ws}/watch-settings", {"timezone": "Mars/Olympus"}),
        ("PATCH", "/api/workspaces/{ws}/watch-settings", {"history_retention_days": 0}),
        ("PATCH", "/api/workspaces/{ws}/watch-settings", {}),
        ("PATCH", "/api/workspaces/{ws}/watch-settings", {"colour": "red"}),
    ],
)
async def test_bad_input_is_an_envelope_error(
    stack: Stack, tenant_factory: TenantFactory, method: str, path: str, body: Any
) -> None:
    tenant = await tenant_factory()
    ws, some = tenant.workspace.id, uuid.uuid4()
    status, answer = await stack.call(
        method, path.format(id=some, ws=ws), tenant, **({"json": body} if body is not None else {})
    )
    assert status in (400, 404), answer
    assert answer["ok"] is False and answer["error"]["code"] in ("invalid_input", "not_found")
    if "history?" in path or "bulk" in path or "settings" in path:
        assert status == 400 and answer["error"]["code"] == "invalid_input"


async def test_bulk_pause_resume_run_and_stop(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    one = await stack.watch(tenant, f"watch {page['url']} every day")
    two = await stack.watch(tenant, f"watch {page['url']}?two every day")
    ids = [one["id"], two["id"]]

    async def rows() -> dict[str, dict[str, Any]]:
        _, listed = await stack.call("GET", "/api/watches", tenant)
        return {row["id"]: row for row in listed["data"]["watches"]}

    status, body = await stack.call("POST", "/api/watches/bulk", tenant,
                                    json={"action": "pause", "ids": ids})  # fmt: skip
    assert status == 200 and all(r["ok"] for r in body["data"]["results"])
    assert board_schema.BulkOutcomes().validate(body["data"]) == {}
    assert [r["run_id"] for r in body["data"]["results"]] == [None, None]
    assert {r["status"] for r in (await rows()).values()} == {"paused"}
    assert all(r["next_run_at"] is None for r in (await rows()).values())
    _, body = await stack.call("POST", "/api/watches/bulk", tenant,
                               json={"action": "run", "ids": [one["id"]]})  # fmt: skip
    assert body["data"]["results"][0]["error"]["code"] == "conflict"  # paused: resume first
    await stack.call("POST", "/api/watches/bulk", tenant, json={"action": "resume", "ids": ids})
    assert {r["status"] for r in (await rows()).values()} == {"ok"}
    _, body = await stack.call("POST", "/api/watches/bulk", tenant,
                               json={"action": "run", "ids": [one["id"]]})  # fmt: skip
    assert body["data"]["results"][0]["ok"] is True
    assert board_schema.BulkOutcomes().validate(body["data"]) == {}
    queued = await stack.services.db.fetch(
        "SELECT id FROM automation_runs WHERE automation_id = $1 AND manual", uuid.UUID(one["id"])
    )
    # the run it queued, to follow (GET /api/automations/{id}/runs/{run_id})
    assert [str(r["id"]) for r in queued] == [body["data"]["results"][0]["run_id"]]
    status, run = await stack.call(
        "GET", f"/api/automations/{one['id']}/runs/{queued[0]['id']}", tenant
    )
    assert status == 200 and run["data"]["status"] in ("queued", "running", "succeeded")
    await stack.call("POST", "/api/watches/bulk", tenant, json={"action": "stop", "ids": ids})
    assert await rows() == {}


async def test_status_says_failing_and_out_of_credits(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory(credits=1)
    watch = await stack.watch(tenant, f"watch {page['url']} every day")  # spends the credit
    automation_id = uuid.UUID(watch["id"])
    run_id = await repo.insert_run(
        stack.services.db, automation_id=automation_id, workspace_id=tenant.workspace.id,
        scheduled_for=dt.datetime.now(dt.UTC), manual=True,
    )  # fmt: skip
    assert run_id is not None
    await runner.execute(stack.services, stack.graph, run_id)
    _, listed = await stack.call("GET", "/api/watches", tenant)
    [row] = listed["data"]["watches"]
    assert row["status"] == "out_of_credits" and row["enabled"] is False

    await stack.services.db.execute(
        "UPDATE automation_runs SET error = 'The page could not be read.' WHERE id = $1", run_id
    )
    await stack.services.db.execute("UPDATE automations SET enabled = true")
    _, listed = await stack.call("GET", "/api/watches", tenant)
    assert listed["data"]["watches"][0]["status"] == "failing"


async def test_retention_prunes_old_checks_and_says_so(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    # Given a watch with three checks, two of them 40 days old, and a retention of 30 days
    tenant = await tenant_factory()
    watch = await stack.watch(tenant, f"watch {page['url']} every day")
    old = [await stack.check(watch["id"])]
    page["lines"] = ["Soup of the day", "Apple tart"]
    old.append(await stack.check(watch["id"]))
    page["lines"] = ["Soup of the day", "Plum cake"]
    kept = await stack.check(watch["id"])
    db = stack.services.db
    await db.execute(
        "UPDATE automation_runs SET scheduled_for = scheduled_for - interval '40 days' "
        "WHERE id = ANY($1::uuid[])", old,
    )  # fmt: skip
    await db.execute("UPDATE page_contents SET seen_at = now() - interval '2 hours'")
    status, prefs = await stack.call(
        "PATCH", f"/api/workspaces/{tenant.workspace.id}/watch-settings", tenant,
        json={"history_retention_days": 30},
    )  # fmt: skip
    assert status == 200 and prefs["data"]["history_retention_days"] == 30

    # When the retention job runs (twice: a base content goes once nothing is on it)
    def cutoff() -> str:
        return (dt.datetime.now(dt.UTC) - dt.timedelta(days=30)).strftime("%Y-%m-%d")

    cutoffs = {cutoff()}  # and after: UTC midnight may pass meanwhile (a loaded machine)
    assert (await history.prune(db))[0] == 2
    await history.prune(db)

    # Then only the recent check is listed, the history says what was pruned, and the contents
    # of the pruned checks are gone while the kept check still opens
    _, body = await stack.call("GET", f"/api/automations/{watch['id']}/history", tenant)
    assert [c["id"] for c in body["data"]["checks"]] == [str(kept)]
    note = body["data"]["pruned"]
    cutoffs.add(cutoff())
    assert board_schema.History().validate(body["data"]) == {}
    assert note["days"] == 30
    assert note["text"] in {f"Checks before {day} were pruned after 30 days." for day in cutoffs}
    assert await db.fetchval("SELECT count(*) FROM page_contents") == 1
    _, shown = await stack.call("GET", f"/api/automations/{watch['id']}/history/{kept}", tenant)
    assert "Plum cake" in shown["data"]["pages"][0]["content"]


def _article() -> str:
    """A real article's text (the largest under 20 KB of the corpus), as a page's markdown."""
    truth = json.loads(gzip.decompress(ARTICLES.read_bytes()))
    bodies = sorted((t["articleBody"] for t in truth.values()), key=len)
    return next(body for body in reversed(bodies) if len(body.encode()) < 20_000)


async def test_fifty_edited_checks_of_a_real_article_stay_under_200_kb(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    # Given a watch of a real article whose text is edited before every one of 50 checks
    tenant = await tenant_factory()
    watch = await stack.watch(tenant, f"watch {page['url']} every day")
    automation = await repo.get_automation(
        stack.services.db, automation_id=uuid.UUID(watch["id"]), workspace_id=tenant.workspace.id
    )
    assert automation is not None
    text, runs = _article(), []
    for n in range(50):
        run_id = await repo.insert_run(
            stack.services.db, automation_id=automation.id, workspace_id=tenant.workspace.id,
            scheduled_for=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=n), manual=False,
        )  # fmt: skip
        assert run_id is not None
        edited = f"Seats left: {50 - n}. Updated at check {n}.\n\n{text}"
        await history.record(stack.services.db, automation, run_id,
                             [{"url": "https://news.example/a", "title": "A", "markdown": edited}],
                             credits=1)  # fmt: skip
        runs.append((run_id, edited))

    # Then the watch's stored history is within the budget, and every check reads back exactly
    stored = await history_db.history_storage(stack.services.db, automation_id=automation.id)
    print(f"\n50 edited checks of a {len(text.encode())} B article: {stored} B stored")
    assert stored <= 200 * 1024
    assert stored < len(text.encode()) * 50 / 10  # far below a compressed copy per check
    for run_id, edited in runs[::7]:
        [found] = await history_db.get_check_pages(
            stack.services.db, run_id=run_id, workspace_id=tenant.workspace.id
        )
        assert history.content(found) == edited


async def test_a_check_of_a_known_content_opens_no_transaction_and_reads_back_the_same(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    # Given a watch whose page reads A, then A again, then B, then A again, and a count of the
    # transactions its history opens
    tenant = await tenant_factory()
    watch = await stack.watch(tenant, f"watch {page['url']} every day")
    automation = await repo.get_automation(
        stack.services.db, automation_id=uuid.UUID(watch["id"]), workspace_id=tenant.workspace.id
    )
    assert automation is not None
    opened: list[int] = []
    transaction = repo.transaction

    def counted(db: asyncpg.Pool) -> Any:
        opened[-1] += 1
        return transaction(db)

    monkeypatch.setattr(repo, "transaction", counted)
    text, db = _article(), stack.services.db
    runs = []
    for n, markdown in enumerate([text, text, f"Sold out.\n\n{text}", text]):
        run_id = await repo.insert_run(
            db, automation_id=automation.id, workspace_id=tenant.workspace.id,
            scheduled_for=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=n), manual=False,
        )  # fmt: skip
        assert run_id is not None
        opened.append(0)
        read = {"url": "https://news.example/a", "title": f"A{n}", "markdown": markdown}
        await history.record(db, automation, run_id, [read], credits=n + 1)
        runs.append((run_id, markdown, n))

    # Then only a new content took a transaction (the known one is one statement: the content
    # touched, the check's pointer and its credits)
    assert opened == [1, 0, 1, 0]
    # And every check reads back exactly, with its own title and credits, each content once
    for run_id, markdown, n in runs:
        [found] = await history_db.get_check_pages(
            db, run_id=run_id, workspace_id=tenant.workspace.id
        )
        assert (history.content(found), found.title) == (markdown, f"A{n}")
        credits = await db.fetchval("SELECT credits FROM automation_runs WHERE id = $1", run_id)
        assert credits == n + 1
    stored = await db.fetchval(
        "SELECT count(*) FROM page_contents WHERE automation_id = $1", automation.id
    )
    assert stored == 2


async def test_a_new_watch_runs_in_the_browsers_time_zone_unless_the_message_names_one(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    browser = await stack.watch(
        tenant, f"watch {page['url']} every weekday at 9am", timezone="America/New_York"
    )
    named = await stack.watch(
        tenant, f"watch {page['url']}?t every day at 9am Tokyo time", timezone="America/New_York"
    )
    assert browser["timezone"] == "America/New_York" and browser["cadence"] == "0 9 * * 1-5"
    assert named["timezone"] == "Asia/Tokyo"
    next_run = dt.datetime.fromisoformat(browser["next_run_at"])
    assert next_run.astimezone(dt.UTC).hour in (13, 14)  # 09:00 in New York

    # No zone from the browser: the workspace's default
    status, _ = await stack.call(
        "PATCH", f"/api/workspaces/{tenant.workspace.id}/watch-settings", tenant,
        json={"timezone": "Europe/Paris"},
    )  # fmt: skip
    assert status == 200
    default = await stack.watch(tenant, f"watch {page['url']}?d every day at 9am")
    assert default["timezone"] == "Europe/Paris"
    _, prefs = await stack.call("GET", f"/api/workspaces/{tenant.workspace.id}/watch-settings",
                                tenant)  # fmt: skip
    assert prefs["data"] == {"timezone": "Europe/Paris", "history_retention_days": 90}


async def test_what_are_you_watching_says_the_next_check_in_the_watchs_zone_and_the_askers(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    # Given a watch started from New York at 9am on weekdays
    tenant = await tenant_factory()
    watch = await stack.watch(
        tenant, f"watch {page['url']} every weekday at 9am", timezone="America/New_York"
    )
    base = str(stack.client.make_url("")).rstrip("/")
    path = f"/api/chats/{watch['chat_id']}/messages"

    async def ask(zone: str) -> str:
        said = await sse.stream(
            base,
            "POST",
            path,
            headers=tenant.headers,
            json_body={"text": "what are you watching?", "timezone": zone},
        )
        return str(said.text)  # fmt: skip

    # When someone in Paris asks what it watches, Then the next check is said at 09:00 New York
    # time, and 15:00 (or 14:00 on the days the two zones' DST differ) in theirs
    nxt = dt.datetime.fromisoformat(watch["next_run_at"])
    there = nxt.astimezone(zoneinfo.ZoneInfo("America/New_York"))
    here = nxt.astimezone(zoneinfo.ZoneInfo("Europe/Paris"))
    answer = await ask("Europe/Paris")
    assert (
        f"Next check: {there:%Y-%m-%d} 09:00 America/New_York ({here:%H:%M} your time, "
        "Europe/Paris)." in answer
    ), answer
    assert "UTC" not in answer
    # And someone in New York hears it once
    answer = await ask("America/New_York")
    assert f"Next check: {there:%Y-%m-%d} 09:00 America/New_York." in answer, answer


async def test_a_message_with_an_unknown_time_zone_is_refused(
    stack: Stack, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()
    _, created = await stack.call("POST", "/api/chats", tenant, json={})
    status, body = await stack.call(
        "POST", f"/api/chats/{created['data']['id']}/messages", tenant,
        json={"text": "hello", "timezone": "Not/AZone"},
    )  # fmt: skip
    assert status == 400 and body["error"]["code"] == "invalid_input"


async def test_a_manual_run_is_marked_manual_in_the_chat(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    tenant = await tenant_factory()
    watch = await stack.watch(tenant, f"watch {page['url']} every day")
    await stack.check(watch["id"])
    _, body = await stack.call("GET", f"/api/chats/{watch['chat_id']}/messages", tenant)
    ran = [m for m in body["data"]["messages"] if m["source"] == "automation"]
    assert ran and all(m["manual"] is True for m in ran)
    assert all(m["manual"] is False for m in body["data"]["messages"] if m["run_id"] is None)
    # and live: the start part of the run's turn says so (the page labels it while it streams)
    entries = await stack.services.redis.xrange(events.stream_key(uuid.UUID(watch["chat_id"])))
    starts = [p for p in (events.decode(i, f)[2] for i, f in entries) if p["type"] == "start"]
    meta = [s.get("messageMetadata", {}) for s in starts]
    assert [m.get("manual", False) for m in meta if m.get("source") == "automation"] == [True]
    assert not any(m.get("manual") for m in meta if m.get("source") != "automation")
