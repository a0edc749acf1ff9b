"""web.discover with a query: a SearXNG-compatible JSON API, its limits, failures and price."""

from __future__ import annotations

from typing import Any

import pytest

from lookout import errors
from lookout.capabilities import registry
from tests.integration import providers
from tests.integration.providers import FakeSearxng, ServerFactory
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("loopback_only")


@pytest.fixture
async def searxng(aiohttp_server: ServerFactory) -> FakeSearxng:
    fake = FakeSearxng()
    await providers.serve(fake, aiohttp_server)
    return fake


async def _discover(searxng: FakeSearxng, raw: dict[str, Any]) -> dict[str, Any]:
    settings = providers.settings(search_url=searxng.url)
    return await providers.run("web.discover", raw, settings)


async def test_results_come_back_as_links_in_the_discover_shape(searxng: FakeSearxng) -> None:
    output = await _discover(searxng, {"query": "flood warnings"})

    assert output["links"][0] == {
        "url": "https://news.example/flood-0",
        "title": "Flood warning 0",
        "snippet": "River levels rising, report 0.",
    }
    assert len(output["links"]) == 10  # the default limit of a search
    assert output["truncated"] is True and output["source"] == "search"
    assert dict(searxng.requests[0].query) == {
        "q": "flood warnings",
        "format": "json",
        "pageno": "1",
    }


async def test_pages_are_read_until_the_limit_or_the_end(searxng: FakeSearxng) -> None:
    output = await _discover(searxng, {"query": "flood", "limit": 50})

    assert [link["url"] for link in output["links"]] == [
        f"https://news.example/flood-{n}" for n in range(25)
    ]
    assert output["truncated"] is False
    assert [request.query["pageno"] for request in searxng.requests] == ["1", "2", "3", "4"]


def test_a_search_returns_at_most_50_results() -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        registry.validate_input(registry.get("web.discover"), {"query": "x", "limit": 51})
    assert "at most 50" in caught.value.details["fields"]["limit"][0]


def test_mapping_a_site_keeps_its_own_limits() -> None:
    verb = registry.get("web.discover")
    data = registry.validate_input(verb, {"url": "https://example.com/", "limit": 5000})
    assert data["limit"] == 5000
    assert registry.validate_input(verb, {"url": "https://example.com/"})["limit"] == 100


@pytest.mark.parametrize(
    ("limit", "returned", "reserved", "charged"),
    [(10, 10, 1, 1), (25, 25, 3, 3), (50, 25, 5, 3), (1, 1, 1, 1)],
)
async def test_a_search_costs_one_credit_per_ten_results_rounded_up(
    searxng: FakeSearxng, limit: int, returned: int, reserved: int, charged: int
) -> None:
    verb = registry.get("web.discover")
    output = await _discover(searxng, {"query": "flood", "limit": limit})

    assert len(output["links"]) == returned
    assert verb.max_units(registry.validate_input(verb, {"query": "flood", "limit": limit})) == (
        reserved
    )
    assert verb.billable_units(output) == charged


async def test_a_search_that_finds_nothing_costs_nothing(searxng: FakeSearxng) -> None:
    searxng.results = []
    output = await _discover(searxng, {"query": "nothing at all"})
    assert output["links"] == []
    assert registry.get("web.discover").billable_units(output) == 0


async def test_their_429_is_rate_limited_with_their_retry_after(searxng: FakeSearxng) -> None:
    searxng.fail_with(
        429, "Too Many Requests", content_type="text/plain", headers={"Retry-After": "5"}
    )
    with pytest.raises(errors.RateLimited, match="retry in 5 s") as caught:
        await _discover(searxng, {"query": "flood"})
    assert caught.value.retry_after == 5


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        (502, "Bad Gateway", "text/plain"),
        (200, "<html>SearXNG</html>", "text/html"),
        (200, '{"query": "flood"}', "application/json"),
    ],
)
async def test_provider_failures_are_upstream_errors(
    searxng: FakeSearxng, status: int, body: str, content_type: str
) -> None:
    searxng.fail_with(status, body, content_type=content_type)
    with pytest.raises(errors.UpstreamError, match="search provider") as caught:
        await _discover(searxng, {"query": "flood"})
    assert caught.value.status == 502


async def test_a_redirect_off_the_search_host_is_refused(
    searxng: FakeSearxng, aiohttp_server: ServerFactory
) -> None:
    elsewhere = FakeSearxng()
    await providers.serve(elsewhere, aiohttp_server)
    assert elsewhere.server is not None
    target = f"http://localhost:{elsewhere.server.port}/search?q=x&format=json"
    searxng.fail_with(307, headers={"Location": target})

    with pytest.raises(errors.UpstreamError, match="not a configured provider host and port"):
        await _discover(searxng, {"query": "flood"})
    assert elsewhere.requests == []
