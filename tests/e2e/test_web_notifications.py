"""Notifications, feeds and import in a real browser (issue #27): a webhook target added from
Settings gets the test message and then a watch's change; a changedetection.io url-watches.json
uploaded from Settings becomes watches; desktop and phone width."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiohttp import web
from playwright.async_api import Page, expect

from lookout.notify import message
from lookout.settings import Settings
from tests.e2e.conftest import Bakery, Tab
from tests.e2e.test_web_chat import accept_dialogs, say, sign_up
from tests.integration import workers

pytestmark = pytest.mark.timeout(240)
SAMPLE = Path(__file__).parents[1] / "corpus" / "changedetection" / "url-watches.json"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Targets on 127.0.0.1 are allowed here (the receiver is a local server)."""
    return settings.replace(notify_allow_private=True)


@pytest.fixture
def notify_worker(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("LOOKOUT_NOTIFY_ALLOW_PRIVATE", "1")
    with workers.running_worker(settings, threads=2) as log:
        yield log


@pytest.fixture
async def received(aiohttp_server: Any) -> tuple[str, list[tuple[dict[str, str], bytes]]]:
    """A local webhook receiver: (its URL, what it got)."""
    got: list[tuple[dict[str, str], bytes]] = []

    async def hook(request: web.Request) -> web.Response:
        got.append((dict(request.headers), await request.read()))
        return web.Response(text="ok")

    receiver = web.Application()
    receiver.router.add_post("/hook", hook)
    server = await aiohttp_server(receiver, access_log=None)
    return str(server.make_url("/hook")), got


async def events(got: list[tuple[dict[str, str], bytes]], event: str, seconds: float = 90) -> Any:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        found = [(h, raw) for h, raw in got if json.loads(raw).get("event") == event]
        if found:
            return found
        await asyncio.sleep(0.3)
    raise AssertionError(f"no {event} event; got {[json.loads(raw) for _, raw in got]}")


async def wait_runs(db: asyncpg.Pool, count: int, seconds: float = 90) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        done = await db.fetchval("SELECT count(*) FROM automation_runs WHERE status = 'succeeded'")
        if done >= count:
            return
        await asyncio.sleep(0.3)
    raise AssertionError(f"fewer than {count} runs succeeded")


async def add_target(page: Page, url: str) -> str:
    section = page.locator("section[aria-labelledby=notifications-heading]")
    await section.get_by_label("Name").fill("my hook")
    await section.get_by_label("URL").fill(url)
    await section.get_by_label("Make it the default").check()
    await section.get_by_role("button", name="Add target").click()
    secret = await section.locator("input.signing-secret").input_value()
    await expect(section.locator("tr[data-target-name='my hook']")).to_contain_text("Default")
    return secret


async def test_a_target_added_in_settings_gets_the_test_message_then_a_change(
    lookout_url: str, notify_worker: Path, bakery: Bakery, desktop: Tab, db: asyncpg.Pool,
    received: tuple[str, list[tuple[dict[str, str], bytes]]],
) -> None:  # fmt: skip
    hook, got = received
    page = desktop.page
    accept_dialogs(page)
    await sign_up(page, lookout_url)

    # Given a person who adds a signed webhook in Settings → Notifications, made the default
    await page.goto(lookout_url + "/#/settings")
    await page.locator("section[aria-labelledby=notifications-heading] summary").click()
    await desktop.shot("01-notifications-schemes")
    secret = await add_target(page, hook)
    assert secret.startswith("whsec_")
    await desktop.shot("02-target-added")

    # When they test it, Then the receiver gets a signed test message and the page says so
    row = page.locator("tr[data-target-name='my hook']")
    await row.get_by_role("button", name="Test").click()
    await expect(row).to_contain_text("Test message sent.")
    [(headers, raw)] = await events(got, message.TEST_EVENT)
    assert message.verify(secret, raw, headers[message.SIGNATURE_HEADER])
    await desktop.shot("03-tested")

    # When they ask in a chat to be notified when the bakery's page changes
    await page.get_by_role("link", name="+ New chat").click()
    await say(page, f"notify me when {bakery.url} changes")
    await expect(page.locator(".message.assistant").last).to_contain_text(
        "send a notification to “my hook”"
    )
    panel = page.locator(".watch-panel")
    await expect(panel).to_contain_text("Notifications: on")
    await panel.get_by_role("button", name="Run now").click()
    await wait_runs(db, 1)

    # And the page changes, and the watch runs again
    bakery.lines = ["Monday to Friday: open from early morning", "New: rye sourdough"]
    await page.wait_for_timeout(1600)  # Run now is re-enabled after 1.5 s
    await panel.get_by_role("button", name="Run now").click()

    # Then the receiver gets the change, signed with the same secret
    [(headers, raw)] = await events(got, "watch.changed")
    assert message.verify(secret, raw, headers[message.SIGNATURE_HEADER])
    assert "New: rye sourdough" in json.dumps(json.loads(raw)["changes"])
    await panel.locator("details.watch-notify summary").click()
    await expect(panel.get_by_label("my hook (default)")).to_be_visible()
    await panel.get_by_role("button", name="Atom feed of this watch").click()
    feed_url = await panel.locator("input.watch-feed-url").input_value()
    feed = await page.request.get(feed_url)
    assert feed.status == 200 and "New: rye sourdough" in await feed.text()
    await desktop.shot("04-watch-notifications")
    assert desktop.errors == []


async def test_a_changedetection_backup_imported_from_settings_becomes_watches_on_a_phone(
    lookout_url: str, phone: Tab
) -> None:
    page = phone.page
    accept_dialogs(page)
    await sign_up(page, lookout_url)
    await page.goto(lookout_url + "/#/settings")
    section = page.locator("section[aria-labelledby=portability-heading]")
    await section.scroll_into_view_if_needed()

    # When they upload changedetection.io's url-watches.json
    await section.get_by_label("Import a file").set_input_files(str(SAMPLE))

    # Then its three watches exist, each in a chat titled like it, with cdio's interval and tags
    result = section.locator(".import-result")
    await expect(result).to_contain_text("Imported 3 watches")
    await expect(result).to_contain_text("Oat milk price · 0 * * * * · Groceries")
    await expect(result).to_contain_text("Status page · */30 * * * *")
    await result.scroll_into_view_if_needed()
    await phone.shot("01-imported")

    # And the workspace feed URL is made once, to copy
    await section.get_by_role("button", name="Make the workspace feed URL").click()
    url = await section.locator("input.feed-url").input_value()
    assert url.startswith(lookout_url + "/feeds/lkf_")
    response = await page.request.get(url)
    assert response.status == 200 and "<feed" in await response.text()
    await phone.shot("02-feed")

    # And the first screen lists the imported watches with their cadence
    await page.goto(lookout_url + "/")
    watching = page.get_by_role("main").get_by_role("listitem")
    await expect(watching.filter(has_text="Oat milk price")).to_contain_text("every hour")
    await expect(watching.filter(has_text="Status page")).to_contain_text("every 30 minutes")
    await phone.shot("03-chats")

    # And the watches page shows each watch's tags from the backup, and filters by them
    await page.get_by_role("link", name="See all watches").click()
    rows = page.locator("tr.watch-row")
    await expect(rows).to_have_count(3)
    await expect(rows.filter(has_text="oat-milk").locator(".watch-tags")).to_have_text("Groceries")
    await page.get_by_label("Tag", exact=True).select_option("Work")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("news.example/releases")
    await expect(rows.first.locator(".tag-chip")).to_have_text(["Work", "changelog"])
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await phone.shot("04-watches-by-tag")
    await page.get_by_label("Tag", exact=True).select_option("")
    await expect(rows).to_have_count(3)
    await rows.filter(has_text="oat-milk").get_by_role("button", name="Groceries").click()
    await expect(rows).to_have_count(1)
    await expect(page.get_by_label("Tag", exact=True)).to_have_value("Groceries")
    assert phone.errors == []
