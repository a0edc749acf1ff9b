"""Accounts in a real browser, on an install where sign-up is by invitation: an owner invites a
guest who joins through the link, and "Sign out everywhere" ends every browser of the owner."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest
from playwright.async_api import Browser, Page, expect

from lookout.access import accounts
from lookout.settings import Settings
from tests.e2e.conftest import DESKTOP, PASSWORD, Tab, open_tab
from tests.e2e.test_web_chat import accept_dialogs

pytestmark = pytest.mark.timeout(180)
OWNER = "owner@example.com"
GUEST = "guest@example.com"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """This install's sign-up is by invitation (LOOKOUT_SIGNUP=invite, the default outside
    `lookout dev`)."""
    return settings.replace(signup="invite")


async def sign_in(page: Page, base: str, email: str) -> None:
    await page.goto(base + "/")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.locator(".user-email")).to_have_text(email)


async def test_an_invited_guest_joins_and_sign_out_everywhere_ends_every_owner_browser(
    lookout_url: str, db: asyncpg.Pool, desktop: Tab, phone: Tab, browser: Browser,
    shots_dir: Path,
) -> None:  # fmt: skip
    # Given an owner the operator created (`lookout admin`), signed in on the page
    owner = await accounts.create_user(db, email=OWNER, password=PASSWORD)
    await accounts.create_workspace(db, name="Bakery watchers", owner_id=owner.id)
    page = desktop.page
    accept_dialogs(page)
    await sign_in(page, lookout_url, OWNER)

    # And a visitor without an invite, who is told sign-up is by invitation
    guest = phone.page
    await guest.goto(lookout_url + "/")
    await guest.get_by_role("button", name="Create an account").click()
    await guest.get_by_label("Email").fill(GUEST)
    await guest.get_by_label("Password").fill(PASSWORD)
    await guest.get_by_role("button", name="Create account").click()
    await expect(guest.get_by_role("alert")).to_contain_text("by invitation")

    # When the owner creates an invite link for the guest, as a viewer
    await page.goto(lookout_url + "/#/settings")
    invites = page.locator("section[aria-labelledby=invites-heading]")
    await invites.get_by_label("Email").fill(GUEST)
    await invites.get_by_label("Role").select_option("viewer")
    await invites.get_by_role("button", name="Create invite link").click()
    link = await invites.locator("input.invite-link").input_value()
    assert link.startswith(lookout_url + "/#/invite/inv_")
    await expect(invites.locator(f"tr[data-invite-email='{GUEST}']")).to_be_visible()
    await desktop.shot("invites")

    # Then the guest's link opens the sign-up form, and they join the owner's workspace
    await guest.goto(link)
    await guest.reload()
    await expect(guest.get_by_role("heading", name="Create your account")).to_be_visible()
    await guest.get_by_label("Email").fill(GUEST)
    await guest.get_by_label("Password").fill(PASSWORD)
    await guest.get_by_role("button", name="Create account").click()
    await expect(guest.locator(".user-email")).to_have_text(GUEST)
    await guest.goto(lookout_url + "/#/settings")
    await expect(guest.get_by_text("Workspace Bakery watchers · your role: viewer")).to_be_visible()
    await phone.shot("invited-guest")

    # When the owner, signed in on a second browser too, signs out everywhere from the first
    second = await open_tab(browser, shots_dir, DESKTOP)
    try:
        await sign_in(second.page, lookout_url, OWNER)
        await page.reload()
        account = page.locator("section[aria-labelledby=account-heading]")
        await account.get_by_role("button", name="Sign out everywhere").click()

        # Then both of the owner's browsers are signed out, and the guest is not
        await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        await second.page.reload()
        await expect(second.page.get_by_role("heading", name="Sign in")).to_be_visible()
        await guest.reload()
        await expect(guest.locator(".user-email")).to_have_text(GUEST)
    finally:
        await second.page.context.close()
    assert desktop.errors == [] and phone.errors == [] and second.errors == []
