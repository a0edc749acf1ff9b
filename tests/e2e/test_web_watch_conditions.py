"""“Tell me when…” in a real browser: the proposal card (Start / Change / Cancel), the watch's
condition and last value, pause / resume and edit from the watch panel."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import Route, expect

from tests.e2e.conftest import Bakery, Tab, record_texts, recorded_texts
from tests.e2e.test_web_chat import accept_dialogs, say, sign_up

pytestmark = pytest.mark.timeout(240)


async def test_propose_change_start_pause_resume_and_edit_a_watch(
    lookout_url: str, bakery: Bakery, desktop: Tab
) -> None:
    page = desktop.page
    accept_dialogs(page)
    bakery.lines = ["Sourdough rye loaf 5,50 €", "Pumpkin loaf 4,20 €"]
    await sign_up(page, lookout_url)
    await page.get_by_role("link", name="+ New chat").click()

    # When they ask to hear when the rye loaf drops below 5 euros
    await say(page, f"tell me when the sourdough rye loaf at {bakery.url} drops below 5 euros")

    # Then a proposal card shows what will be watched and what it reads now
    card = page.locator(".card.proposal").last
    await expect(card).to_contain_text("the price is below 5 €")
    await expect(card).to_contain_text("5.5")
    await desktop.shot("01-proposal")

    # When they change it to "below 4,80" and then start it
    await card.get_by_role("button", name="Change").click()
    await card.get_by_label("What to change").fill("below 4.80")
    await card.get_by_role("button", name="Update").click()
    amended = page.locator(".card.proposal").last
    await expect(amended).to_contain_text("the price is below 4.80 €")
    await amended.get_by_role("button", name="Start").click()

    # Then the chat is watched and its panel shows the condition
    panel = page.locator(".watch-panel")
    await expect(panel).to_contain_text("Tells you when the price is below 4.80 €")
    await desktop.shot("02-started")

    # When they pause it from the panel, Then it shows paused and offers Resume
    await panel.get_by_role("button", name="Pause").click()
    await expect(panel).to_contain_text("Paused")
    await panel.get_by_role("button", name="Resume").click()
    await expect(panel.get_by_role("button", name="Pause")).to_be_visible()

    # When they edit its cadence, and the panel is redrawn while they type (here: they pause it;
    # a reload of the chat after an event does the same), Then the form stays open as typed
    await panel.get_by_role("button", name="Edit").click()
    await panel.get_by_label("Cadence (cron)").fill("0 */2 * * *")
    await panel.get_by_role("button", name="Pause").click()
    await expect(panel.get_by_role("button", name="Resume")).to_be_visible()
    await expect(panel.get_by_label("Cadence (cron)")).to_have_value("0 */2 * * *")
    # and saving it, the panel shows the new schedule
    await panel.get_by_role("button", name="Save").click()
    await expect(panel).to_contain_text("every 2 hours")
    await desktop.shot("03-edited")

    # When a reload of the chat starts (here: after they save the form again), they ask for a
    # check now while it is on its way (no worker here: the check stays queued), and the reload
    # arrives after the click, made before the run was inserted: the last run it knows is done
    said = panel.locator(".meta[role=status]")
    await record_texts(said)
    made, release, delivered = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def reload_in_flight(route: Route) -> None:
        response = await route.fetch()
        made.set()
        await release.wait()
        chat = await response.json()
        chat["data"]["watch"]["last_run_status"] = "succeeded"  # the run before this one
        await route.fulfill(response=response, json=chat)
        delivered.set()

    await page.route(re.compile(r"/api/chats/[0-9a-f-]+$"), reload_in_flight, times=1)
    await panel.get_by_role("button", name="Edit").click()
    await panel.get_by_role("button", name="Save").click()
    await asyncio.wait_for(made.wait(), 15)
    await panel.get_by_role("button", name="Run now").click()
    await expect(said).to_have_text("Check queued. The result will appear in this chat.")
    release.set()
    await asyncio.wait_for(delivered.wait(), 15)
    # Then the notice stays: the panel reads the run it queued, which is still queued
    await page.wait_for_timeout(1000)
    await expect(said).to_have_text("Check queued. The result will appear in this chat.")
    assert "" not in await recorded_texts(page)
    assert desktop.errors == []
