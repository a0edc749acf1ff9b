"""A person uses Lookout in a real browser: sign up, ask, watch, see a change live, stop, keys."""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Dialog, Page, expect
from playwright.async_api import Error as PlaywrightError

from lookout import errors
from lookout.chat import events
from lookout.settings import Settings
from tests.e2e.conftest import PASSWORD, Bakery, Line, Tab, serve

pytestmark = pytest.mark.timeout(240)


async def scroll_to(page: Any, selector: str) -> None:
    """Scroll to an element the page may re-render meanwhile (the live list refreshes)."""
    for _ in range(10):
        try:
            await page.locator(selector).first.scroll_into_view_if_needed(timeout=2_000)
            return
        except PlaywrightError:
            await page.wait_for_timeout(200)
    raise AssertionError(f"{selector} never stayed on the page long enough to scroll to it")


async def sign_up(page: Page, base: str) -> str:
    email = f"person-{uuid.uuid4().hex[:8]}@example.com"
    await page.goto(base + "/")
    await page.get_by_role("button", name="Create an account").click()
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()
    return email


async def say(page: Page, text: str) -> None:
    box = page.get_by_label("Message", exact=True)
    await box.fill(text)
    # As a person does, send once the last answer is done: while a turn is on its way the button
    # reads "Answering…" and Enter keeps the text. A tool card shows its page's title before the
    # answer's text and its end arrive (CI once sent here that early: the text stayed unsent).
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()
    await box.press("Enter")


def accept_dialogs(page: Page) -> None:
    async def accept(dialog: Dialog) -> None:
        await dialog.accept()

    page.on("dialog", accept)


async def test_ask_watch_see_the_change_live_stop_and_manage_keys(
    lookout_url: str, worker: Path, bakery: Bakery, desktop: Tab
) -> None:
    page = desktop.page
    accept_dialogs(page)

    # Given a new account: its workspace and credit balance are always in view
    await sign_up(page, lookout_url)
    balance = page.get_by_test_id("balance")
    await expect(balance).to_have_text("100 credits")
    await expect(page.locator(".workspace-name")).to_contain_text("workspace")
    await desktop.shot("01-signed-up")

    # When they ask about a (slow) local page in a new chat (slow enough for a loaded machine's
    # browser to see the call working)
    bakery.delay = 4.0
    await page.get_by_role("link", name="+ New chat").click()
    await say(page, f"what is on {bakery.url} right now?")

    # Then the answer streams in: the verb call is shown working before its result arrives
    card = page.locator("details.tool-card").first
    await expect(card).to_contain_text("Working…")
    await expect(card.locator(".tool-verb")).to_have_text("web.scrape")
    await desktop.shot("02-streaming")
    await expect(card).to_contain_text("Corner Bakery opening hours")
    await expect(card.locator(".tool-status")).to_have_text("Done")
    answer = page.locator(".message.assistant .text").last
    await expect(answer).to_contain_text("Fresh bread on Baker Street")
    # and the card opens to a readable result, the charge shows in the balance
    await card.locator("summary").click()
    await expect(card.locator(".result-item h4")).to_have_text("Corner Bakery opening hours")
    await expect(card.locator(".excerpt")).to_contain_text("baked on the premises")
    await expect(balance).to_have_text("99 credits")
    await expect(page.locator(".chat-item").first).to_contain_text("what is on")
    await desktop.shot("03-answer-and-tool-card")

    # When they ask Lookout to keep watching it every hour
    bakery.delay = 0.0
    await say(page, f"watch {bakery.url} every hour")

    # Then the chat is marked watched, in the list and in the chat, with its next run
    await expect(page.locator(".message.assistant .text").last).to_contain_text(
        "I'll check this every hour"
    )
    await expect(page.locator(".chat-item .badge.watch")).to_have_text("● Watched · every hour")
    panel = page.locator(".watch-panel")
    await expect(panel).to_contain_text("Watched every hour")
    await expect(panel).to_contain_text("Next check")
    await desktop.shot("04-watched")

    # When the page changes and they press "Run now" (no reload: the page keeps its state)
    await page.evaluate("window.__sameDocument = true")
    bakery.lines = ["Monday to Friday: open from early morning", "New: sourdough rye on Fridays"]
    await panel.get_by_role("button", name="Run now").click()

    # Then the scheduled check's change report appears live
    report = page.locator(".message.assistant.from-watch").last
    await expect(report.locator(".diff-added")).to_contain_text("sourdough rye", timeout=60_000)
    await expect(report.locator(".diff-removed")).to_contain_text("pumpkin loaf")
    assert await page.evaluate("window.__sameDocument === true")
    await panel.get_by_text("Run history").click()
    await expect(panel.locator(".run-history tbody tr").first).to_contain_text("Done")
    await expect(panel.locator(".run-history tbody tr").first).to_contain_text("Run now")
    await scroll_to(page, ".message.assistant.from-watch >> nth=-1")  # the list re-renders
    await desktop.shot("05-change-report-live")

    # When they stop watching
    await panel.get_by_role("button", name="Stop watching").click()

    # Then the chat is a normal chat again
    await expect(page.locator(".watch-panel")).to_have_count(0)
    await expect(page.locator(".chat-item .badge.watch")).to_have_count(0)
    await desktop.shot("06-stopped")

    # When they create an API key in the settings
    await page.get_by_role("link", name="Settings").click()
    await page.get_by_label("Name").first.fill("my script")
    await page.get_by_role("button", name="Create key").click()

    # Then it is shown once, ready to copy, and works against the API
    shown = page.get_by_label("New API key")
    await expect(shown).to_have_value(re.compile(r"^lk_"))
    key = await shown.input_value()
    await expect(page.locator(".new-key").get_by_role("button", name="Copy")).to_be_visible()
    row = page.locator("tr[data-key-name='my script']")
    await expect(row).to_contain_text(key[:8])
    await expect(page.locator(".config pre").first).to_contain_text(key)
    async with httpx.AsyncClient(base_url=lookout_url) as client:
        headers = {"Authorization": f"Bearer {key}"}
        assert (await client.get("/api/me", headers=headers)).status_code == 200
        await desktop.shot("07-key-created")

        # When they revoke it, Then the list says so and the key stops working
        await row.get_by_role("button", name="Revoke my script").click()
        await expect(row).to_contain_text("Revoked")
        assert (await client.get("/api/me", headers=headers)).status_code == 401
    await desktop.shot("08-key-revoked")
    assert desktop.errors == []


async def session_client(page: Page, base: str) -> httpx.AsyncClient:
    """An HTTP client signed in as the browser's user (same cookie, same Origin)."""
    cookies = {c["name"]: c["value"] for c in await page.context.cookies()}
    return httpx.AsyncClient(base_url=base, cookies=cookies, headers={"Origin": base})


async def test_on_a_phone_answers_survive_a_reload_and_a_network_drop(
    line: tuple[Line, str], lookout_url: str, worker: Path, bakery: Bakery, phone: Tab
) -> None:
    page = phone.page
    direct_url = lookout_url
    accept_dialogs(page)
    proxy, lookout_url = line

    # Given a person who signs up with the keyboard alone, on a phone-sized screen
    await page.goto(lookout_url + "/")
    await page.get_by_role("button", name="Create an account").click()
    email = f"phone-{uuid.uuid4().hex[:8]}@example.com"
    await page.keyboard.type(email)
    await page.keyboard.press("Tab")
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press("Enter")
    await expect(page.get_by_test_id("balance")).to_have_text("100 credits")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await phone.shot("01-phone-home")

    # When they ask about a slow page and reload the page while the answer is on its way
    bakery.delay = 2.5
    await page.get_by_role("link", name="Start a new chat").click()
    await say(page, f"what is on {bakery.url} right now?")
    await expect(page.locator("details.tool-card")).to_contain_text("Working…")
    await page.reload()

    # Then the turn in flight is picked up again and finishes, once
    card = page.locator("details.tool-card")
    await expect(card).to_contain_text("Corner Bakery opening hours")
    await expect(page.locator(".message.assistant")).to_have_count(1)
    await expect(page.locator(".message.user")).to_have_count(1)
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await phone.shot("02-phone-answer-after-reload")

    # When the chat is watched and the network drops while a check runs
    bakery.delay = 0.0
    await say(page, f"keep an eye on {bakery.url} every hour")
    await expect(page.locator(".watch-panel")).to_contain_text("every hour")
    proxy.cut()
    await page.context.set_offline(True)
    connection = page.locator(".connection")
    await expect(connection).to_contain_text("reconnecting", timeout=15_000)
    bakery.lines = [*bakery.lines, "New: cinnamon buns on Saturdays"]
    async with await session_client(page, direct_url) as client:
        [watch] = (await client.get("/api/automations/watches")).json()["data"]["watches"]
        assert (await client.post(f"/api/automations/{watch['id']}/run")).status_code == 202
        for _ in range(100):
            runs = (await client.get(f"/api/automations/{watch['id']}/runs")).json()["data"]
            if runs["runs"][0]["status"] == "succeeded":
                break
            await page.wait_for_timeout(200)
    await phone.shot("03-phone-offline")

    # Then, back online, the page resumes where it stopped and shows the change it missed
    proxy.mend()
    await page.context.set_offline(False)
    await expect(page.locator(".diff-added")).to_contain_text("cinnamon buns", timeout=30_000)
    await expect(connection).to_be_hidden()
    await scroll_to(page, ".diff-added")
    await phone.shot("04-phone-change-after-reconnect")

    # When they rename the chat from the phone
    await page.get_by_role("button", name="Rename").click()
    await page.get_by_label("Chat title").fill("Bakery hours")
    await page.get_by_label("Chat title").press("Enter")
    await expect(page.locator("h1.chat-title")).to_have_text("Bakery hours")

    # Then the chat list (behind the Chats button) shows the new name and the watch
    await page.get_by_role("button", name="Chats").click()
    item = page.locator(".chat-item").first
    await expect(item).to_contain_text("Bakery hours")
    await expect(item).to_contain_text("Watched · every hour")
    await expect(page.locator("#sidebar")).to_be_in_viewport(ratio=1)
    await page.wait_for_timeout(300)  # the slide-in, for the screenshot
    await phone.shot("05-phone-chat-list")
    await page.keyboard.press("Escape")
    assert phone.errors == []


async def test_settings_connect_an_agent_usage_and_connectors(
    lookout_url: str, bakery: Bakery, desktop: Tab
) -> None:
    page = desktop.page
    accept_dialogs(page)
    await sign_up(page, lookout_url)
    await expect(page.get_by_test_id("balance")).to_have_text("100 credits")

    # Given a chat that read a page (one credit)
    await page.get_by_role("link", name="+ New chat").click()
    await say(page, f"summarize {bakery.url}")
    await expect(page.locator("details.tool-card .tool-status")).to_have_text("Done")

    # When they open the settings and create a key
    await page.get_by_role("link", name="Settings").click()
    await page.get_by_label("Name").first.fill("agent")
    await page.get_by_role("button", name="Create key").click()
    key = await page.get_by_label("New API key").input_value()

    # Then usage shows the charge per verb, and the agent panel has the MCP URL and configs
    usage = page.locator("section[aria-labelledby=usage-heading]")
    await expect(usage).to_contain_text("99")
    await expect(usage.locator("tbody tr").first).to_contain_text("web.scrape")
    agent = page.locator("section[aria-labelledby=agent-heading]")
    await expect(agent.get_by_label("MCP server URL")).to_have_value(lookout_url + "/mcp")
    await expect(agent.locator("pre").first).to_contain_text(f"Authorization: Bearer {key}")
    await expect(agent).to_contain_text("Cursor")

    # When they add Lookout's own MCP server as a connector (with the key) and test it
    connectors = page.locator("section[aria-labelledby=connectors-heading]")
    await connectors.get_by_label("Name", exact=True).fill("self")
    await connectors.get_by_label("URL").fill(lookout_url + "/mcp")
    await connectors.get_by_label("Header name").fill("Authorization")
    await connectors.get_by_label("Header value").fill(f"Bearer {key}")
    await connectors.get_by_role("button", name="Add connector").click()
    row = connectors.locator("li.connector")
    await expect(row).to_contain_text("Sends Authorization")
    await row.get_by_role("button", name="Test").click()

    # Then the connector answers with its tools
    await expect(row.locator(".test-result")).to_contain_text("web_scrape")

    # And it is not used in chats until ticked; ticking it marks it, as a reload shows
    use = row.get_by_label("Use in chats", exact=False)
    await expect(use).not_to_be_checked()
    async with page.expect_response(lambda r: r.request.method == "PATCH") as patched:
        await use.check()
    assert (await patched.value).status == 200
    await page.reload()
    await expect(connectors.locator("li.connector").get_by_label("Use in chats")).to_be_checked()
    await connectors.scroll_into_view_if_needed()
    await desktop.shot("01-settings-connectors")
    await agent.scroll_into_view_if_needed()
    await desktop.shot("02-settings-connect-an-agent")

    # When they remove it, Then it is gone
    await row.get_by_role("button", name="Remove").click()
    await expect(connectors.locator("li.connector")).to_have_count(0)
    await expect(connectors).to_contain_text("No connectors yet.")

    # When they make a read-only key, Then the list shows each key's scope
    await page.get_by_label("Name").first.fill("dashboard")
    await page.get_by_label("Scope").select_option("read-only")
    await page.get_by_role("button", name="Create key").click()
    await expect(page.locator("tr[data-key-name='dashboard']")).to_contain_text("read-only")
    await expect(page.locator("tr[data-key-name='agent']")).to_contain_text("full")

    # When they sign out, Then the sign-in form is back and signing in restores their chats
    await page.get_by_role("button", name="Sign out", exact=True).click()
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert desktop.errors == []


async def test_an_answer_whose_stream_loses_redis_resumes_and_shows_once(
    lookout_url: str, bakery: Bakery, desktop: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a service whose event stream fails under the next answer's reader, once, right
    # after the turn's first part (the turn itself goes on)
    turn_events = events.turn_events
    cut: list[str] = []

    async def away_once(*args: Any) -> AsyncIterator[tuple[str, Any]]:
        async for entry in turn_events(*args):
            yield entry
            if not cut:
                cut.append(entry[1]["type"])
                raise errors.Unavailable(events.STREAM_AWAY)

    page = desktop.page
    await sign_up(page, lookout_url)
    await expect(page.get_by_test_id("balance")).to_have_text("100 credits")
    monkeypatch.setattr(events, "turn_events", away_once)

    # When they ask about a (slow) page
    bakery.delay = 1.5
    await page.get_by_role("link", name="+ New chat").click()
    await say(page, f"what is on {bakery.url} right now?")

    # Then the page picks the turn up again and shows the whole answer, once, with no error
    card = page.locator("details.tool-card")
    await expect(card).to_contain_text("Corner Bakery opening hours")
    answer = page.locator(".message.assistant .text").last
    await expect(answer).to_contain_text("Fresh bread on Baker Street")
    await expect(page.locator(".message.assistant")).to_have_count(1)
    await expect(page.locator(".message.user")).to_have_count(1)
    await expect(page.locator(".message.assistant")).not_to_contain_text("unavailable")
    assert cut == ["start"]
    assert desktop.errors == []


async def test_a_failed_verb_call_reads_as_a_sentence(
    settings: Settings, aiohttp_server: Any, bakery: Bakery, desktop: Tab
) -> None:
    # Given a service whose new workspaces start with no credits
    broke = dataclasses.replace(settings, default_credits=0)
    page = desktop.page
    await sign_up(page, await serve(aiohttp_server, broke))
    await expect(page.get_by_test_id("balance")).to_have_text("0 credits")

    # When they ask about a page
    await page.get_by_role("link", name="+ New chat").click()
    await say(page, f"what is on {bakery.url} right now?")

    # Then the card says the call failed and why, and the answer says it in words
    card = page.locator("details.tool-card")
    await expect(card.locator(".tool-status")).to_have_text("Failed")
    await card.locator("summary").click()
    await expect(card.locator(".tool-body")).to_contain_text(
        "ask the workspace owner to add credits"
    )
    answer = page.locator(".message.assistant .text").last
    await expect(answer).to_contain_text("I couldn't get 127.0.0.1")
    await desktop.shot("01-failed-call")

    # When they delete the chat, Then it is gone from the list
    accept_dialogs(page)
    await page.get_by_role("button", name="Delete").click()
    await expect(page.locator(".chat-list")).to_have_text("No chats yet.")
    await expect(page.get_by_role("heading", name="What should Lookout look at?")).to_be_visible()

    # And, on a fresh load, the home screen takes typing at once, and from the top of the page
    # the skip link takes keyboard users straight to the content
    await page.reload()
    await expect(page.get_by_test_id("balance")).to_be_visible()
    await expect(page.get_by_label("Ask Lookout")).to_be_focused()
    skip = page.get_by_role("link", name="Skip to content")
    went = []  # where each Tab went, shown if none reached the skip link
    for _ in range(3):  # seen once in a CI run (2026-12-06): the first Tab went elsewhere
        await page.evaluate(  # back to the top of the page, as a keyboard user starting over
            "document.body.tabIndex = -1; document.body.focus();"
            " document.body.removeAttribute('tabindex')"
        )
        await page.keyboard.press("Tab")
        try:
            await expect(skip).to_be_focused(timeout=1500)
            break
        except AssertionError:
            went.append(await page.evaluate("document.activeElement.outerHTML.slice(0, 120)"))
    await expect(skip, f"the Tabs went to {went}").to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator("main#main")).to_be_focused()
    await expect(page.get_by_role("heading", name="What should Lookout look at?")).to_be_visible()
    assert desktop.errors == []


async def test_a_slow_call_shows_its_job_progress(
    settings: Settings, aiohttp_server: Any, worker: Path, bakery: Bakery, desktop: Tab
) -> None:
    # Given a service that hands long calls to a background job at once
    quick = dataclasses.replace(settings, job_wait_s=0.1)
    page = desktop.page
    await sign_up(page, await serve(aiohttp_server, quick))
    bakery.delay = 3.0

    # When they ask to compare more pages than are read inline
    await page.get_by_role("link", name="+ New chat").click()
    urls = " ".join(f"{bakery.url}?branch={n}" for n in range(6))
    await say(page, f"compare {urls}")

    # Then a progress bar shows while the job runs, and the result arrives in the card
    bar = page.locator(".job progress")
    await expect(bar).to_be_visible(timeout=15_000)
    await expect(bar).to_have_attribute("aria-label", re.compile("Working in the background"))
    await desktop.shot("01-job-progress")
    card = page.locator("details.tool-card")
    await expect(card.locator(".tool-status")).to_have_text("Done", timeout=30_000)
    await expect(bar).to_have_count(0)
    await expect(page.locator(".message.assistant .text").last).to_contain_text("Comparing 6 pages")
    await desktop.shot("02-job-done")
    assert desktop.errors == []
