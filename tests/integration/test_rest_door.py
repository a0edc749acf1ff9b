"""The REST door end to end: auth, envelope, credits, rate limits, idempotency (inline verbs)."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.db import repo
from lookout.settings import Settings
from tests.integration import factories
from tests.integration.factories import Site, TenantFactory, member_cookie, site, tenant_factory

__all__ = ["site", "tenant_factory"]


@pytest.fixture
async def client(aiohttp_client: Any, settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(settings))


def assert_error(body: dict[str, Any], code: str) -> None:
    assert body["ok"] is False and body["data"] is None
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    assert body["meta"]["request_id"]


async def test_scrape_answers_the_envelope_and_charges_one_credit(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=10)

    response = await client.post(
        "/v1/web/scrape", json={"url": site.url("/hello")}, headers=tenant.headers
    )

    body = await response.json()
    assert response.status == 200, body
    assert body["ok"] is True and body["error"] is None
    assert body["data"]["pages"][0]["title"] == "hello"
    assert body["meta"]["verb"] == "web.scrape"
    assert body["meta"]["credits_charged"] == 1
    assert body["meta"]["request_id"] == response.headers["X-Request-Id"]
    assert isinstance(body["meta"]["duration_ms"], int)
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 9


async def test_charge_equals_pages_fetched_successfully(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=10)
    urls = [site.url("/a"), site.url("/missing"), site.url("/b")]

    response = await client.post("/v1/web/scrape", json={"urls": urls}, headers=tenant.headers)

    body = await response.json()
    assert [page["error"] is None for page in body["data"]["pages"]] == [True, False, True]
    assert body["meta"]["credits_charged"] == 2
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 8


async def test_insufficient_credits_answers_402_before_any_fetch(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=2)
    urls = [site.url(f"/p{i}") for i in range(3)]

    response = await client.post("/v1/web/scrape", json={"urls": urls}, headers=tenant.headers)

    body = await response.json()
    assert response.status == 402
    assert_error(body, "insufficient_credits")
    assert body["error"]["details"] == {"balance": 2, "price": 3}
    assert site.hits == {}
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 2


async def test_a_failed_call_charges_nothing(
    client: Any, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=5)

    # No search provider is configured, so the executor fails after credits were reserved
    response = await client.post(
        "/v1/web/discover", json={"query": "lookout"}, headers=tenant.headers
    )

    body = await response.json()
    assert response.status == 501, body
    assert_error(body, "provider_not_configured")
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 5
    assert await repo.ledger_sum(db, workspace_id=tenant.workspace.id) == 5


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "unauthenticated"),
        ({"Authorization": "Bearer lk_not-a-real-key-at-all-000000"}, "unauthenticated"),
        ({"Authorization": "Basic abc"}, "unauthenticated"),
    ],
)
async def test_missing_or_bad_credentials_are_401(
    client: Any, site: Site, headers: dict[str, str], code: str
) -> None:
    response = await client.post("/v1/web/scrape", json={"url": site.url("/")}, headers=headers)

    assert response.status == 401
    assert_error(await response.json(), code)
    assert site.hits == {}


async def test_invalid_input_names_the_fields(client: Any, tenant_factory: TenantFactory) -> None:
    tenant = await tenant_factory()

    unknown = await client.post(
        "/v1/web/scrape", json={"url": "https://a.example", "colour": "red"}, headers=tenant.headers
    )
    too_many = await client.post(
        "/v1/web/scrape",
        json={"urls": [f"https://a.example/{i}" for i in range(21)]},
        headers=tenant.headers,
    )
    not_json = await client.post("/v1/web/scrape", data=b"{nope", headers=tenant.headers)

    unknown_body = await unknown.json()
    assert unknown.status == 400
    assert_error(unknown_body, "invalid_input")
    assert "colour" in unknown_body["error"]["details"]["fields"]
    assert unknown_body["meta"]["verb"] == "web.scrape"
    assert too_many.status == 400
    assert "urls" in (await too_many.json())["error"]["details"]["fields"]
    assert not_json.status == 400
    assert_error(await not_json.json(), "invalid_input")


async def test_a_wrong_method_says_what_the_address_takes(
    client: Any, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()

    response = await client.get("/v1/web/scrape", headers=tenant.headers)

    body = await response.json()
    assert response.status == 400
    assert_error(body, "invalid_input")
    assert body["error"]["message"] == "This address does not accept GET; use POST."
    assert body["error"]["details"] == {"allowed": ["POST"]}
    assert response.headers["Allow"] == "POST"


async def test_body_over_one_mebibyte_is_413(client: Any, tenant_factory: TenantFactory) -> None:
    tenant = await tenant_factory()

    response = await client.post(
        "/v1/web/scrape",
        data=b'{"url": "' + b"a" * (1024 * 1024 + 10) + b'"}',
        headers={**tenant.headers, "Content-Type": "application/json"},
    )

    assert response.status == 413
    assert_error(await response.json(), "payload_too_large")


async def test_viewer_cannot_spend_but_editor_can(
    client: Any,
    tenant_factory: TenantFactory,
    site: Site,
    db: asyncpg.Pool,
    settings: Settings,
) -> None:
    tenant = await tenant_factory(credits=5)
    viewer = await member_cookie(db, settings, tenant, role="viewer")
    editor = await member_cookie(db, settings, tenant, role="editor")
    origin = {"Origin": factories.page_origin(client)}

    refused = await client.post(
        "/v1/web/scrape", json={"url": site.url("/v")}, cookies=viewer, headers=origin
    )
    allowed = await client.post(
        "/v1/web/scrape", json={"url": site.url("/e")}, cookies=editor, headers=origin
    )

    assert refused.status == 403
    assert_error(await refused.json(), "forbidden")
    assert allowed.status == 200
    assert site.hits == {"/e": 1}
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 4


async def test_rate_limit_answers_429_with_retry_after(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory(rate_limit=3)
    statuses = []
    for _ in range(4):
        response = await client.post(
            "/v1/web/scrape", json={"url": site.url("/r")}, headers=tenant.headers
        )
        statuses.append(response.status)

    assert statuses == [200, 200, 200, 429]
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert response.headers["RateLimit-Limit"] == "3"
    assert_error(await response.json(), "rate_limited")
    assert site.hits == {"/r": 3}


async def test_one_key_cannot_exhaust_another_keys_window(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    greedy = await tenant_factory(rate_limit=1)
    other = await tenant_factory(rate_limit=1)
    for _ in range(3):
        await client.post("/v1/web/scrape", json={"url": site.url("/g")}, headers=greedy.headers)
    forged = {"Authorization": "Bearer lk_forged-key-that-does-not-exist-0000"}
    for _ in range(3):
        await client.post("/v1/web/scrape", json={"url": site.url("/f")}, headers=forged)

    response = await client.post(
        "/v1/web/scrape", json={"url": site.url("/o")}, headers=other.headers
    )

    assert response.status == 200


async def test_same_idempotency_key_is_charged_once_and_replayed(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=10)
    headers = {**tenant.headers, "Idempotency-Key": "order-42"}
    payload = {"url": site.url("/once")}

    first = await client.post("/v1/web/scrape", json=payload, headers=headers)
    second = await client.post("/v1/web/scrape", json=payload, headers=headers)
    different = await client.post(
        "/v1/web/scrape", json={"url": site.url("/other")}, headers=headers
    )

    assert first.status == second.status == 200
    assert await second.json() == await first.json()
    assert second.headers["Idempotent-Replayed"] == "true"
    assert site.hits == {"/once": 1}
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 9
    assert different.status == 409
    assert_error(await different.json(), "conflict")


async def test_concurrent_calls_never_overdraw_the_balance(
    client: Any, tenant_factory: TenantFactory, site: Site, db: asyncpg.Pool
) -> None:
    # Given a balance of 50 and 200 one-credit calls at once
    tenant = await tenant_factory(credits=50)

    async def call(i: int) -> int:
        response = await client.post(
            "/v1/web/scrape", json={"url": site.url(f"/c{i}")}, headers=tenant.headers
        )
        await response.read()
        return int(response.status)

    statuses = await asyncio.gather(*(call(i) for i in range(200)))

    # Then exactly 50 succeed, the rest are refused, and the books balance at zero
    assert statuses.count(200) == 50
    assert statuses.count(402) == 150
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 0
    assert await repo.ledger_sum(db, workspace_id=tenant.workspace.id) == 0


async def test_usage_shows_balance_ledger_and_per_verb_totals(
    client: Any, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory(credits=10)
    await client.post("/v1/web/scrape", json={"url": site.url("/u")}, headers=tenant.headers)

    response = await client.get("/v1/usage", headers=tenant.headers)

    data = (await response.json())["data"]
    assert data["balance"] == 9
    assert data["verbs"] == [{"verb": "web.scrape", "calls": 1, "credits": 1}]
    assert [entry["kind"] for entry in data["ledger"]] == ["settle", "reserve", "grant"]


async def test_verbs_and_openapi_are_generated_from_the_registry(client: Any) -> None:
    from openapi_spec_validator import validate

    verbs = (await (await client.get("/v1/verbs")).json())["data"]["verbs"]
    spec = await (await client.get("/v1/openapi.json")).json()
    docs = await client.get("/v1/docs")
    bundle = await client.get("/v1/docs/static/swagger-ui-bundle.js")

    assert {verb["name"] for verb in verbs} >= {"web.scrape", "web.discover"}
    assert all(verb["input_schema"]["type"] == "object" for verb in verbs)
    validate(spec)
    assert spec["openapi"] == "3.1.0"
    assert {f"/v1/{verb['name'].replace('.', '/')}" for verb in verbs} <= set(spec["paths"])
    assert docs.status == 200 and "script-src 'self'" in docs.headers["Content-Security-Policy"]
    assert bundle.status == 200 and len(await bundle.read()) > 100_000


# The pages that render the document itself, not part of the API it describes.
_DOC_ROUTES = {"/v1/openapi.json", "/v1/docs", "/v1/docs/init.js", "/v1/docs/static/{name}"}


async def test_openapi_documents_every_api_route_and_nothing_else(client: Any) -> None:
    spec = await (await client.get("/v1/openapi.json")).json()
    served = {
        (route.method, route.resource.canonical)
        for route in client.server.app.router.routes()
        if route.resource is not None
        and route.resource.canonical.startswith(("/v1/", "/api/", "/feeds/"))
        and route.resource.canonical not in _DOC_ROUTES
        and route.method != "HEAD"  # aiohttp adds one to every GET
    }
    documented = {
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method in item
        if method != "parameters"
    }
    streams = {
        path
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method != "parameters"
        and "text/event-stream" in operation.get("responses", {}).get("200", {}).get("content", {})
    }

    assert served == documented
    assert streams == {
        "/api/chats/{chat_id}/messages",
        "/api/chats/{chat_id}/stream",
        "/api/chats/{chat_id}/events",
    }
    watch = spec["paths"]["/api/automations/watches"]["post"]["requestBody"]
    assert set(watch["content"]["application/json"]["schema"]["required"]) == {
        "chat_id", "message", "cadence"
    }  # fmt: skip
