"""The watches page and a watch's history in a real browser, at desktop and phone width: two
watches with their last check and last change after runs, the diff of a past check, and the
browser's time zone used for a new watch's cadence."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, Route, expect

from lookout.settings import Settings
from tests.e2e.conftest import (
    DESKTOP,
    PASSWORD,
    PHONE,
    Bakery,
    Tab,
    record_texts,
    recorded_texts,
    serve,
)
from tests.e2e.test_web_chat import accept_dialogs, say
from tests.integration.test_watch_results_history import site  # noqa: F401 - a fixture

pytestmark = pytest.mark.timeout(300)


async def zoned_tab(browser: Browser, shots: Path, viewport: dict[str, int], zone: str) -> Tab:
    """A tab whose browser says it is in `zone` (Playwright's timezone_id)."""
    context = await browser.new_context(viewport=viewport, timezone_id=zone)  # type: ignore[arg-type]
    page = await context.new_page()
    page.set_default_timeout(20_000)
    tab = Tab(page=page, shots=shots, errors=[])
    page.on("pageerror", lambda error: tab.errors.append(f"page error: {error}"))
    return tab


async def sign_up_and_ask(page: Page, base: str, text: str) -> None:
    """Sign up, then type the first question straight away: the home screen takes it."""
    await page.goto(base + "/")
    await page.get_by_role("button", name="Create an account").click()
    await page.get_by_label("Email").fill(f"w-{uuid.uuid4().hex[:8]}@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()
    await expect(page.get_by_label("Ask Lookout")).to_be_focused()
    await page.keyboard.type(text)
    await page.keyboard.press("Enter")
    await expect(page.locator(".watch-panel")).to_be_visible(timeout=30_000)


async def watches_of(page: Page) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await page.evaluate(
        "fetch('/api/watches').then(r => r.json()).then(b => b.data.watches)"
    )
    return rows


async def run_now(page: Page, row: Any) -> None:
    said = page.get_by_test_id("watches-said")
    await row.get_by_role("button", name="Run now").click()
    await expect(said).to_have_text("Check queued: 1 of 1.")
    await expect(said).to_have_text("The check is done.", timeout=60_000)


@pytest.fixture
async def desktop_ny(browser: Browser, shots_dir: Path) -> Any:
    tab = await zoned_tab(browser, shots_dir, DESKTOP, "America/New_York")
    yield tab
    await tab.page.context.close()


@pytest.fixture
async def phone_tokyo(browser: Browser, shots_dir: Path) -> Any:
    tab = await zoned_tab(browser, shots_dir, PHONE, "Asia/Tokyo")
    yield tab
    await tab.page.context.close()


async def test_two_watches_their_last_check_and_change_and_the_diff_of_a_past_check(
    lookout_url: str, worker: Path, bakery: Bakery, desktop_ny: Tab
) -> None:
    page = desktop_ny.page
    accept_dialogs(page)

    # Given a person in New York who starts a weekday watch from the home screen, and a second
    await sign_up_and_ask(page, lookout_url, f"watch {bakery.url} every weekday at 9am")
    await page.get_by_role("link", name="+ New chat").click()
    await say(page, f"keep an eye on {bakery.url}?second=1 every day")
    await expect(page.locator(".watch-panel")).to_be_visible(timeout=30_000)

    # Then the first runs at 9:00 in the browser's zone, not UTC
    by_message = {row["message"]: row for row in await watches_of(page)}
    weekday = by_message[f"watch {bakery.url} every weekday at 9am"]
    assert (weekday["timezone"], weekday["cadence"]) == ("America/New_York", "0 9 * * 1-5")

    # When both are checked from the watches page, then the bakery changes and the first is
    # checked twice more
    await page.get_by_role("link", name="Watches").click()
    table = page.locator(".watch-table")
    await expect(table.locator("tbody tr")).to_have_count(2)
    first = table.locator("tr.watch-row", has_text="every weekday")
    second = table.locator("tr.watch-row", has_text="second=1")
    await expect(first.locator(".last-checked")).to_have_text("Not yet")
    await run_now(page, first)
    await run_now(page, second)
    bakery.lines = ["Monday to Friday: open from early morning", "New: sourdough rye on Fridays"]
    await run_now(page, first)
    await run_now(page, first)

    # Then the list shows both checked, the first changed (at its second check), the other not
    await expect(first.locator(".last-checked")).not_to_have_text("Not yet")
    await expect(second.locator(".last-checked")).not_to_have_text("Not yet")
    await expect(first.locator(".last-changed")).not_to_have_text("No change yet")
    await expect(second.locator(".last-changed")).to_have_text("No change yet")
    rows = {row["id"]: row for row in await watches_of(page)}
    assert rows[weekday["id"]]["last_changed_at"] < rows[weekday["id"]]["last_checked_at"]
    await expect(first).to_contain_text("America/New_York")
    await expect(first.locator(".badge")).to_have_text("OK")
    await desktop_ny.shot("01-watches")

    # When they open the first watch's history and pick its past check (the one that changed)
    await first.get_by_role("link", name="History").click()
    checks = page.locator("tr.check-row")
    await expect(checks).to_have_count(3)
    await expect(checks.nth(0)).to_contain_text("No change")
    await expect(checks.nth(1)).to_contain_text("Changed")
    await checks.nth(1).get_by_role("button", name="View").click()

    # Then the diff against the check before it says what changed, before -> after
    diff = page.get_by_test_id("diff")
    await expect(diff.locator(".diff-added, .diff-modified ins")).to_contain_text("sourdough rye")
    await expect(diff.locator(".diff-removed, .diff-modified del")).to_contain_text("pumpkin loaf")
    await page.get_by_text("The page as it was then").click()
    await expect(page.locator(".page-content")).to_contain_text("sourdough rye")
    await desktop_ny.shot("02-history-diff")

    # When they open its chat: the checks they asked for are not called scheduled
    await page.get_by_role("link", name="Open its chat").click()
    markers = page.locator(".scheduled-marker")
    await expect(markers).to_have_count(3)
    await expect(markers.first).to_contain_text("Check you asked for")
    await expect(page.locator(".scheduled-marker", has_text="Scheduled check")).to_have_count(0)
    # and "Check queued" goes once the check they start from the panel is done
    panel = page.locator(".watch-panel")
    said = panel.locator(".meta[role=status]")
    # (every text the notice takes is recorded: a check done within milliseconds clears it
    # before a poll of the page could see it, so the notice is not polled for)
    await record_texts(said)
    await panel.get_by_role("button", name="Run now").click()
    await expect(markers).to_have_count(4, timeout=60_000)
    await expect(said).to_have_text("", timeout=15_000)
    texts = await recorded_texts(page)
    assert texts[0] == "Check queued. The result will appear in this chat.", texts
    await desktop_ny.shot("03-chat-after-run-now")

    # And filtering and bulk pausing work on the list
    await page.get_by_role("link", name="Watches").click()
    await page.get_by_label("Filter").fill("second=1")
    await expect(table.locator("tbody tr")).to_have_count(1)
    await page.get_by_label("Filter").fill("")
    await page.get_by_label("Select all").check()
    await page.locator(".bulk-bar").get_by_role("button", name="Pause").click()
    await expect(table.locator(".badge", has_text="Paused")).to_have_count(2)
    assert desktop_ny.errors == []


async def test_a_check_done_before_the_list_reloads_is_still_said_done(
    lookout_url: str, worker: Path, bakery: Bakery, desktop_ny: Tab
) -> None:
    page = desktop_ny.page
    accept_dialogs(page)

    # Given a watch on the watches page, never checked
    await sign_up_and_ask(page, lookout_url, f"watch {bakery.url} every day")
    await page.get_by_role("link", name="Watches").click()
    row = page.locator("tr.watch-row")
    await expect(row.locator(".last-checked")).to_have_text("Not yet")

    # When Run now's check is done before the list's reload after it answers (that reload is
    # held until the list it brings already has the check: a fast worker, a slow network)
    held: list[str] = []

    async def hold(route: Route) -> None:
        if route.request.method != "GET" or held:
            await route.continue_()
            return
        for _ in range(120):
            response = await route.fetch()
            [watch] = (await response.json())["data"]["watches"]
            if watch["last_checked_at"] is not None:
                held.append(watch["last_checked_at"])
                await route.fulfill(response=response)
                return
            await asyncio.sleep(0.5)
        await route.abort()

    await page.route("**/api/watches", hold)
    # Then the page still says the check is done (it read "Check queued" for good before)
    await run_now(page, row)
    assert held, "the reload after Run now was not held"
    await expect(row.locator(".last-checked")).not_to_have_text("Not yet")

    # And when it is paused while a check it ran is on its way, "Paused" stands once that check
    # is done (the check's own "done" is not said over a newer action)
    said = page.get_by_test_id("watches-said")
    await record_texts(said)
    await row.get_by_role("button", name="Run now").click()
    await expect(said).to_have_text("Check queued: 1 of 1.")
    await row.get_by_role("button", name="Pause").click()
    await expect(said).to_have_text("Paused: 1 of 1.")
    [watch] = await watches_of(page)
    runs = f"/api/automations/{watch['id']}/runs"
    for _ in range(120):  # the run ends (run, or skipped: the watch was paused first)
        statuses = await page.evaluate(
            f"fetch('{runs}').then(r => r.json()).then(b => b.data.runs.map(r => r.status))"
        )
        if len(statuses) == 2 and not {"queued", "running"} & set(statuses):
            break
        await asyncio.sleep(0.5)
    else:
        raise AssertionError(f"the second check did not end: {statuses}")
    await asyncio.sleep(4)  # the page looks every 1.5 s, then reloads the list
    assert await recorded_texts(page) == ["Check queued: 1 of 1.", "Paused: 1 of 1."]
    await expect(said).to_have_text("Paused: 1 of 1.")
    assert desktop_ny.errors == []
    await page.unroute_all(behavior="ignoreErrors")  # a look in flight as the page closes


async def test_a_long_check_is_still_followed_and_a_failed_check_says_why(
    settings: Settings, aiohttp_server: Any, worker: Path, bakery: Bakery, desktop_ny: Tab
) -> None:
    page = desktop_ny.page
    accept_dialogs(page)
    # A workspace with the one credit its first question spends: every check fails for real,
    # out of credits (and pauses its watch). The watches page is shown a long one: what it reads
    # of the run is rewritten to "running" while `long` holds (a slow site, a busy worker).
    reason = "Out of credits: the watch is paused."
    long: list[bool] = []

    async def rewrite(route: Route) -> None:
        response = await route.fetch()
        if not long:
            await route.fulfill(response=response)
            return
        answer = await response.json()
        answer["data"].update({"status": "running", "error": None})
        await route.fulfill(response=response, json=answer)

    await page.route("**/api/automations/*/runs/*", rewrite)
    lookout = await serve(aiohttp_server, settings.replace(default_credits=1))
    await sign_up_and_ask(page, lookout, f"watch {bakery.url} every day")
    await expect(page.get_by_test_id("balance")).to_have_text("0 credits")

    # When a check run from the watches page is still running after a minute
    await page.get_by_role("link", name="Watches").click()
    row = page.locator("tr.watch-row")
    said = page.get_by_test_id("watches-said")
    long.append(True)
    await row.get_by_role("button", name="Run now").click()
    await expect(said).to_have_text("Check queued: 1 of 1.")
    # Then the page says it is still checking (it stopped looking and said "Check queued" for
    # good before)
    await expect(said).to_have_text("Still checking: 1 of 1.", timeout=90_000)
    # And when it ends, failed, the page says so and why, not "done"
    long.clear()
    await expect(said).to_have_text(f"The check failed: {reason}", timeout=15_000)

    # When the watch is resumed and checked again from its chat's panel
    await row.get_by_role("button", name="Resume").click()
    await expect(said).to_have_text("Resumed: 1 of 1.")
    await row.locator("a.watch-page").click()
    panel = page.locator(".watch-panel")
    await panel.get_by_role("button", name="Run now").click()
    # Then the panel says why it failed, instead of clearing "Check queued" as if it had an answer
    await expect(panel.locator(".meta[role=status]")).to_have_text(
        f"The check failed: {reason}", timeout=60_000
    )
    assert desktop_ny.errors == []
    # The page keeps looking every 5 s: a look whose answer is being rewritten when the page
    # closes must not fail the teardown (CI: "Route.fulfill: Fetch response has been disposed").
    await page.unroute_all(behavior="ignoreErrors")


async def test_on_a_phone_the_zone_list_history_and_keys_fit(
    lookout_url: str, worker: Path, bakery: Bakery, phone_tokyo: Tab
) -> None:
    page = phone_tokyo.page
    accept_dialogs(page)

    # Given a person in Tokyo on a phone who asks for a weekday watch at once
    await sign_up_and_ask(page, lookout_url, f"watch {bakery.url} every weekday at 9am")

    # Then the watch runs in Tokyo time, and its panel leaves most of the chat visible
    [row] = await watches_of(page)
    assert row["timezone"] == "Asia/Tokyo"
    box = await page.locator(".watch-panel").bounding_box()
    messages = await page.locator(".scroller").bounding_box()
    assert box is not None and messages is not None
    print(f"\non a phone: watch panel {box['height']:.0f} px, messages {messages['height']:.0f} px")
    assert messages["height"] >= 2 * box["height"]  # the messages keep two thirds of the chat
    await phone_tokyo.shot("01-phone-chat")

    # When they open the watches page from the menu and run the watch twice, the page changing
    await page.get_by_role("link", name="Watches").click()
    card = page.locator("tr.watch-row")
    await expect(card).to_have_count(1)
    await run_now(page, card)
    bakery.lines = ["Monday to Friday: open from early morning", "New: sourdough rye on Fridays"]
    await run_now(page, card)
    await expect(card.locator(".last-changed")).not_to_have_text("No change yet")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await phone_tokyo.shot("02-phone-watches")

    # Then its history opens the newest check's diff, on screen
    await card.get_by_role("link", name="History").click()
    diff = page.get_by_test_id("diff")
    await expect(diff).to_contain_text("sourdough rye")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await phone_tokyo.shot("03-phone-history")

    # And in Settings a new key's Revoke button is on screen
    await page.get_by_role("link", name="Settings").click()
    await page.get_by_label("Name").first.fill("phone key")
    await page.get_by_role("button", name="Create key").click()
    revoke = page.get_by_role("button", name="Revoke phone key")
    await revoke.scroll_into_view_if_needed()
    where = await revoke.bounding_box()
    assert where is not None and where["x"] >= 0 and where["x"] + where["width"] <= PHONE["width"]
    # on screen as laid out: the keys table needs no sideways scrolling to reach it
    assert await page.locator(".table-wrap:has(.keys-table)").evaluate(
        "wrap => wrap.scrollWidth <= wrap.clientWidth && wrap.scrollLeft === 0"
    )
    await expect(page.get_by_label("Default time zone")).to_have_value("UTC")
    await phone_tokyo.shot("04-phone-keys")
    assert phone_tokyo.errors == []


async def test_a_site_watch_history_shows_its_results_then_and_what_was_added(
    lookout_url: str,
    worker: Path,
    site: dict[str, Any],  # noqa: F811 - the fixture imported above
    desktop_ny: Tab,
) -> None:
    page = desktop_ny.page
    accept_dialogs(page)

    # Given a watch of a site's pages, checked before and after the site gains a page
    await sign_up_and_ask(page, lookout_url, f"watch the pages of {site['url']} every day")
    await page.get_by_role("link", name="Watches").click()
    row = page.locator("tr.watch-row")
    await expect(row).to_have_count(1)
    await run_now(page, row)
    site["pages"] = ["/menu", "/hours", "/events"]
    await run_now(page, row)

    # When its history is opened
    await row.get_by_role("link", name="History").click()
    checks = page.locator("tr.check-row")
    await expect(checks).to_have_count(2)
    await expect(checks.get_by_text("Nothing kept")).to_have_count(0)

    # Then the newest check's diff says the new page was added, and its results are kept
    diff = page.get_by_test_id("diff")
    await expect(diff.locator(".diff-added")).to_contain_text("/events")
    await expect(diff.locator(".diff-removed")).to_have_count(0)
    await page.get_by_text("The results as they were then").click()
    await expect(page.locator(".page-content")).to_contain_text("/events")
    await desktop_ny.shot("01-site-history")

    # And the older check, picked, has the results as they were then (no /events)
    await checks.nth(1).get_by_role("button", name="View").click()
    await page.get_by_text("The results as they were then").click()
    await expect(page.locator(".page-content")).to_contain_text("/hours")
    await expect(page.locator(".page-content")).not_to_contain_text("/events")

    # And at phone width it fits the screen
    await page.set_viewport_size(PHONE)  # type: ignore[arg-type]
    await checks.nth(0).get_by_role("button", name="View").click()
    await expect(diff.locator(".diff-added")).to_contain_text("/events")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await desktop_ny.shot("02-site-history-phone")
    assert desktop_ny.errors == []
