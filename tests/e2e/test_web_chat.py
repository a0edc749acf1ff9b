"""A person uses Lookout in a real browser: sign up, ask, watch, see a change live, stop, keys."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Dialog, Page, expect

from tests.e2e.conftest import PASSWORD, Bakery, Tab

pytestmark = pytest.mark.timeout(240)


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

    # When they ask about a (slow) local page in a new chat
    bakery.delay = 1.5
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
    await report.scroll_into_view_if_needed()
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
