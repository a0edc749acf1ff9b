"""A person asks the rule planner about shop pages in a real browser: the answer renders as
markdown — a compare is a real table, features a real list, a quote a quote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from playwright.async_api import expect

from tests.e2e.conftest import Tab
from tests.e2e.test_web_chat import say, sign_up

pytestmark = pytest.mark.timeout(240)
PAGES = Path(__file__).parents[1] / "unit" / "answer_pages"


@pytest.fixture
async def shop(aiohttp_server: Any) -> str:
    async def page(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return web.Response(text=(PAGES / f"{name}.html").read_text(), content_type="text/html")

    served = web.Application()
    served.router.add_get("/p/{name:product|product_b}", page)
    return str((await aiohttp_server(served)).make_url("/p/")).rstrip("/")


async def test_answers_render_tables_lists_and_quotes(
    lookout_url: str, shop: str, desktop: Tab
) -> None:
    page = desktop.page
    await sign_up(page, lookout_url)
    await page.get_by_role("link", name="+ New chat").click()

    # When they compare two product pages
    await say(page, f"compare {shop}/product and {shop}/product_b")

    # Then the answer is a table with a row per shared fact
    answer = page.locator(".message.assistant .text").last
    table = answer.locator("table")
    await expect(table).to_be_visible(timeout=30_000)
    await expect(table.locator("th").nth(1)).to_contain_text("Stovetop Kettle 1.7 L")
    price = table.locator("tr", has_text="Price")
    await expect(price.locator("td")).to_have_text(["Price", "€59.00", "€79.00"])
    await desktop.shot("01-compare-table")

    # When they ask for the features of one of them
    await say(page, f"what are the features of the kettle at {shop}/product?")

    # Then the features are a list, not one glued paragraph, and the source is a link
    answer = page.locator(".message.assistant .text").nth(1)
    items = answer.locator("ul li")
    await expect(items.first).to_be_visible(timeout=30_000)
    await expect(items).to_contain_text(["Loud two-tone whistle when the water boils"])
    await expect(
        answer.get_by_role("link", name="Stovetop Kettle 1.7 L", exact=False)
    ).to_be_visible()

    # When they ask a price question, Then the price leads and its sentence is quoted
    await say(page, f"how much is delivery on {shop}/product?")
    answer = page.locator(".message.assistant .text").nth(2)
    await expect(answer.locator("blockquote").first).to_contain_text(
        "Free delivery", timeout=30_000
    )
    await desktop.shot("02-list-and-quote")
    assert desktop.errors == []
