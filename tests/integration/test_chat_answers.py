"""The rule planner's answers through the chat door: the question that was asked is answered
(a field first), "what's new on <site>" chains discover → scrape, and a maps request that asks for
reviews of what it finds reads its location right."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from aiohttp import web

from lookout import app
from lookout.agent import planner_rules
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.providers import FakePlaces, ServerFactory
from tests.integration.test_chat_agent import chat_of, say

__all__ = ["tenant_factory"]

PAGES = pathlib.Path(__file__).parents[1] / "unit" / "answer_pages"
POSTS = {
    "/2026/11/tram-line": ("Tram line approved", "The council approved the airport tram line."),
    "/2026/10/harbour-festival": ("Harbour festival returns", "Three days of music by the sea."),
    "/2026/09/new-library": ("New library opens", "The central library reopened after works."),
    "/2025/01/old-post": ("An old post", "Something that happened long ago in the city."),
}


def _post(title: str, lede: str) -> str:
    body = f"<p>{lede} " + "More on this story in the paragraphs below. " * 8 + "</p>"
    head = f"<html><head><title>{title}</title></head>"
    return f"{head}<body><main><h1>{title}</h1>{body}</main></body></html>"


def blog_app(*, dated: bool) -> web.Application:
    """A blog: posts, an index that lists the newest first, and a sitemap (dated or not)."""
    order = list(POSTS)  # newest first on the index
    sitemap_order = [order[3], order[1], order[0], order[2]]  # a sitemap is in no useful order

    async def index(request: web.Request) -> web.Response:
        items = "".join(f'<li><a href="{path}">{POSTS[path][0]}</a></li>' for path in order)
        head = "<html><head><title>City blog</title></head>"
        html = f"{head}<body><main><h1>City blog</h1><ul>{items}</ul></main></body></html>"
        return web.Response(text=html, content_type="text/html")

    async def sitemap(request: web.Request) -> web.Response:
        stamps = {order[0]: "2026-11-20", order[1]: "2026-10-02", order[2]: "2026-09-15",
                  order[3]: "2025-01-05"}  # fmt: skip
        base = f"http://{request.host}"
        entries = "".join(
            f"<url><loc>{base}{path}</loc>"
            + (f"<lastmod>{stamps[path]}</lastmod>" if dated else "")
            + "</url>"
            for path in sitemap_order
        )
        xml = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        return web.Response(text=xml, content_type="application/xml")

    async def post(request: web.Request) -> web.Response:
        title, lede = POSTS[request.path]
        return web.Response(text=_post(title, lede), content_type="text/html")

    blog = web.Application()
    blog.router.add_get("/", index)
    blog.router.add_get("/sitemap.xml", sitemap)
    for path in POSTS:
        blog.router.add_get(path, post)
    return blog


def calls(result: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        (p["toolName"], p["input"]) for p in result.parts if p["type"] == "tool-input-available"
    ]


async def test_a_price_question_is_answered_with_the_price_first(
    aiohttp_client: Any, aiohttp_server: ServerFactory, settings: Settings,
    tenant_factory: TenantFactory,
) -> None:  # fmt: skip
    shop = web.Application()
    html = (PAGES / "product.html").read_text()

    async def kettle(request: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    shop.router.add_get("/kettle", kettle)
    server = await aiohttp_server(shop)
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory(credits=10)
    _, chat_id = await chat_of(client, tenant)

    result = await say(
        client, tenant, chat_id, f"what is the price of the kettle on {server.make_url('/kettle')}?"
    )

    assert [name for name, _ in calls(result)] == ["web_scrape"]
    assert result.text.startswith("**Price:** €59.00")
    assert "Sections:" not in result.text[:300]


@pytest.mark.parametrize("dated", [True, False], ids=["sitemap-lastmod", "listing-order"])
async def test_whats_new_reads_the_newest_posts(
    aiohttp_client: Any, aiohttp_server: ServerFactory, settings: Settings,
    tenant_factory: TenantFactory, dated: bool,
) -> None:  # fmt: skip
    server = await aiohttp_server(blog_app(dated=dated))
    client = await aiohttp_client(app.create_app(settings))
    tenant = await tenant_factory(credits=20)
    _, chat_id = await chat_of(client, tenant)
    home = str(server.make_url("/"))

    result = await say(client, tenant, chat_id, f"what's new on {home}?")

    made = calls(result)
    expected = (
        ["web_discover", "web_scrape"] if dated else ["web_discover", "web_scrape", "web_scrape"]
    )
    assert [name for name, _ in made] == expected
    read = [url.removeprefix(home.rstrip("/")) for url in made[-1][1]["urls"]]
    assert read == ["/2026/11/tram-line", "/2026/10/harbour-festival", "/2026/09/new-library"]
    text = result.text
    assert text.index("Tram line approved") < text.index("Harbour festival returns")
    assert "The council approved the airport tram line." in text
    assert "An old post" not in text
    if dated:
        assert "(2026-11-20)" in text


async def test_places_near_a_location_then_their_reviews(
    aiohttp_client: Any, aiohttp_server: ServerFactory, settings: Settings,
    tenant_factory: TenantFactory,
) -> None:  # fmt: skip
    places = FakePlaces()
    await providers.serve(places, aiohttp_server)
    google = settings.replace(google_places_url=places.url, google_places_key=providers.GOOGLE_KEY)
    client = await aiohttp_client(app.create_app(google))
    tenant = await tenant_factory(credits=20)
    _, chat_id = await chat_of(client, tenant)

    result = await say(
        client, tenant, chat_id,
        "find coffee shops near Alexanderplatz Berlin and show me their reviews",
    )  # fmt: skip

    made = calls(result)
    assert made[0] == (
        "maps_search",
        {"query": "coffee shops", "near": "Alexanderplatz Berlin", "limit": 5},
    )
    assert [name for name, _ in made[1:]] == ["maps_reviews"] * 3
    assert "Reviews of **Spice Temple 0**" in result.text
    assert "Reviews of **Spice Temple 2**" in result.text


async def test_a_question_without_a_link_or_search_says_what_to_configure(
    aiohttp_client: Any, settings: Settings, tenant_factory: TenantFactory
) -> None:
    client = await aiohttp_client(app.create_app(settings.replace(search_url="")))
    tenant = await tenant_factory(credits=5)
    _, chat_id = await chat_of(client, tenant)

    result = await say(client, tenant, chat_id, "who won the local elections last week?")

    assert planner_rules.NO_SEARCH in result.text
    assert "LOOKOUT_SEARCH_URL" in result.text
