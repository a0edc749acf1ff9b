"""Feeds and portability over REST: Atom feeds behind secret URLs (rotated, revoked), export and
import of watches, and a changedetection.io url-watches.json imported in one step."""

from __future__ import annotations

import copy
import json
import pathlib
import uuid
import xml.etree.ElementTree as ET
from typing import Any

import asyncpg
import pytest

from lookout.db import repo
from lookout.watches import feeds, service
from tests.integration import factories
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.integration.test_notify_watches import Stack, page, stack
from tests.integration.test_watches import make_watch, owner

__all__ = ["page", "stack", "tenant_factory"]

ATOM = "{http://www.w3.org/2005/Atom}"
SAMPLE = pathlib.Path(__file__).parents[1] / "corpus" / "changedetection" / "url-watches.json"


def cdio_sample() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SAMPLE.read_text())
    return loaded


def ws(tenant: Tenant, tail: str) -> str:
    return f"/api/workspaces/{tenant.workspace.id}{tail}"


async def read_feed(stack: Stack, url: str) -> tuple[int, str]:
    """GET a feed's secret URL with no other credential, as a feed reader does."""
    response = await stack.client.get(url.removeprefix(stack.services.settings.public_url))
    return response.status, await response.text()


async def make_feed(stack: Stack, tenant: Tenant, **body: Any) -> dict[str, Any]:
    status, answer = await stack.call("POST", ws(tenant, "/feeds"), tenant, json=body)
    assert status == 201, answer
    data: dict[str, Any] = answer["data"]
    return data


async def test_a_watch_feed_lists_its_changes_and_its_url_can_be_rotated_and_revoked(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], db: asyncpg.Pool
) -> None:
    # Given a watch whose page changed once, and its feed
    tenant = await tenant_factory()
    watch = await make_watch(db, stack.services.settings, tenant, page["url"])
    assert await stack.run(watch) == "succeeded"
    page["lines"] = ["Soup of the day", "Apple tart"]
    assert await stack.run(watch) == "succeeded"
    made = await make_feed(stack, tenant, watch_id=str(watch.id))

    # When a feed reader fetches its URL (no cookie, no key)
    status, text = await read_feed(stack, made["url"])

    # Then it is Atom with one entry: the change, before → after, linking to the chat
    assert status == 200, text
    root = ET.fromstring(text)
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == 1
    content = entries[0].findtext(f"{ATOM}content") or ""
    assert "Apple tart" in content and "Fresh bread" in content
    assert str(watch.chat_id) in (entries[0].find(f"{ATOM}link").get("href") or "")  # type: ignore[union-attr]
    _, listed = await stack.call("GET", ws(tenant, "/feeds"), tenant)
    assert [f["watch_id"] for f in listed["data"]["feeds"]] == [str(watch.id)]
    token = made["url"].rsplit("/", 1)[1]
    assert token not in json.dumps(listed) and listed["data"]["feeds"][0]["prefix"] == token[:10]
    stored = await db.fetchval("SELECT token_hash FROM feed_tokens WHERE id = $1",
                               uuid.UUID(made["feed"]["id"]))  # fmt: skip
    assert stored == feeds.digest(token)

    # When it is rotated, the old URL stops and the new one works; revoked, none works
    rotated = await make_feed(stack, tenant, watch_id=str(watch.id))
    assert rotated["feed"]["id"] == made["feed"]["id"]
    assert (await read_feed(stack, made["url"]))[0] == 404
    assert (await read_feed(stack, rotated["url"]))[0] == 200
    status, _ = await stack.call("DELETE", ws(tenant, f"/feeds/{made['feed']['id']}"), tenant)
    assert status == 200
    status, text = await read_feed(stack, rotated["url"])
    assert status == 404 and json.loads(text)["error"]["code"] == "not_found"


async def test_the_workspace_feed_holds_only_its_own_watches(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], db: asyncpg.Pool
) -> None:
    a, b = await tenant_factory(), await tenant_factory()
    watch = await make_watch(db, stack.services.settings, a, page["url"])
    assert await stack.run(watch) == "succeeded"
    page["lines"] = ["Soup of the day", "Plum cake"]
    assert await stack.run(watch) == "succeeded"

    a_feed, b_feed = await make_feed(stack, a), await make_feed(stack, b)
    a_text, b_text = (
        (await read_feed(stack, a_feed["url"]))[1],
        (await read_feed(stack, b_feed["url"]))[1],
    )

    assert "Plum cake" in a_text and "Plum cake" not in b_text
    assert len(ET.fromstring(b_text).findall(f"{ATOM}entry")) == 0
    status, body = await stack.call("POST", ws(b, "/feeds"), b, json={"watch_id": str(watch.id)})
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _ = await stack.call("DELETE", ws(b, f"/feeds/{a_feed['feed']['id']}"), b)
    assert status == 404
    assert (await read_feed(stack, a_feed["url"]))[0] == 200


@pytest.mark.parametrize("token", ["nope", "lkf_" + "x" * 43, "lkf_" + "y" * 400])
async def test_an_unknown_feed_token_is_not_found(stack: Stack, token: str) -> None:
    response = await stack.client.get(f"/feeds/{token}")
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "not_found"


@pytest.mark.parametrize("body", [{"watch_id": "nope"}, {"watch": None}, [1]])
async def test_a_bad_feed_body_is_refused(
    stack: Stack, tenant_factory: TenantFactory, body: Any
) -> None:
    tenant = await tenant_factory()
    status, answer = await stack.call("POST", ws(tenant, "/feeds"), tenant, json=body)
    assert status == 400 and answer["error"]["code"] == "invalid_input"


async def test_an_export_imported_into_another_workspace_makes_the_same_watches(
    stack: Stack, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    # Given two watches in A, one of them paused
    a, b = await tenant_factory(), await tenant_factory()
    first = await make_watch(db, stack.services.settings, a, "https://shop.example/a")
    second = await make_watch(db, stack.services.settings, a, "https://shop.example/b",
                              cron="0 9 * * *")  # fmt: skip
    await stack.call("PATCH", f"/api/automations/{first.id}", a, json={"enabled": False})
    below = {"kind": "below", "value": 4.5, "text": None, "unit": "EUR"}
    status, _ = await stack.call("PATCH", f"/api/automations/{second.id}", a,
                                 json={"condition": below})  # fmt: skip
    assert status == 200

    # When A exports and B imports the file
    status, exported = await stack.call("GET", ws(a, "/watches/export"), a)
    assert status == 200, exported
    document = exported["data"]
    status, imported = await stack.call(
        "POST", ws(b, "/watches/import"), b, json={"source": "lookout", "file": document}
    )

    # Then B has the same questions, cadences and paused state, each in its own chat
    assert status == 201, imported
    assert len(imported["data"]["created"]) == 2
    _, b_export = await stack.call("GET", ws(b, "/watches/export"), b)
    keys = ("message", "cadence", "enabled", "title", "condition")
    strip = lambda doc: [{k: w[k] for k in keys}  # noqa: E731
                         for w in doc["watches"]]  # fmt: skip
    assert strip(b_export["data"]) == strip(document)
    assert [w["enabled"] for w in document["watches"]] == [False, True]
    assert document["watches"][1]["condition"] == below
    _, still = await stack.call("GET", ws(b, "/watches/export"), a)
    assert still["error"]["code"] == "not_found"  # A cannot read B's export


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(format="cdio"), "not a Lookout watches export"),
        (lambda d: d["watches"][0].update(script="x"), "not a Lookout watches export"),
        (lambda d: d["watches"][0].update(cadence="* * * * *"), "minutes"),
        (lambda d: d.update(watching={}), "changedetection.io"),
    ],
)
async def test_a_bad_lookout_file_is_refused_and_creates_nothing(
    stack: Stack, tenant_factory: TenantFactory, change: Any, said: str
) -> None:
    tenant = await tenant_factory()
    document = {"format": "lookout.watches", "version": 1, "watches": [
        {"message": "what is on https://shop.example/a", "cadence": "0 9 * * *"}]}  # fmt: skip
    change(document)

    status, body = await stack.call(
        "POST", ws(tenant, "/watches/import"), tenant, json={"source": "lookout", "file": document}
    )

    assert status == 400, body
    assert said in json.dumps(body["error"]), body
    _, exported = await stack.call("GET", ws(tenant, "/watches/export"), tenant)
    assert exported["data"]["watches"] == []


async def test_a_changedetection_backup_becomes_watches_in_one_step(
    stack: Stack, tenant_factory: TenantFactory
) -> None:
    tenant = await tenant_factory()

    status, body = await stack.call(
        "POST", ws(tenant, "/watches/import"), tenant,
        json={"source": "changedetection.io", "file": cdio_sample()},
    )  # fmt: skip

    assert status == 201, body
    made = {w["title"]: (w["cadence"], w["tags"]) for w in body["data"]["created"]}
    assert made == {
        "Oat milk price": ("0 * * * *", ["Groceries"]),  # its own 1 hour
        "Release notes — News Example": ("0 */3 * * *", ["Work", "changelog"]),  # the default
        "Status page": ("*/30 * * * *", []),
    }
    assert {"include_filters", "processor", "notification_urls"} <= set(
        body["data"]["ignored_keys"]
    )
    _, exported = await stack.call("GET", ws(tenant, "/watches/export"), tenant)
    by_title = {w["title"]: w for w in exported["data"]["watches"]}
    assert by_title["Status page"]["enabled"] is False  # paused there, paused here
    assert by_title["Oat milk price"]["message"] == "what is on https://shop.example/oat-milk"
    assert by_title["Oat milk price"]["tags"] == ["Groceries"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.pop("watching"), "no `watching` object"),
        (lambda d: next(iter(d["watching"].values())).update(url="ftp://x.example/"), "http(s)"),
        (lambda d: next(iter(d["watching"].values())).update(time_between_check=[1]), "object"),
        (
            lambda d: next(iter(d["watching"].values())).update(
                time_between_check={"hours": -1}, time_between_check_use_default=False
            ),
            "number",
        ),
    ],
)
async def test_a_file_that_is_not_a_changedetection_backup_is_refused(
    stack: Stack, tenant_factory: TenantFactory, change: Any, said: str
) -> None:
    tenant = await tenant_factory()
    document = copy.deepcopy(cdio_sample())
    change(document)

    status, body = await stack.call(
        "POST", ws(tenant, "/watches/import"), tenant,
        json={"source": "changedetection.io", "file": document},
    )  # fmt: skip

    assert status == 400 and body["error"]["code"] == "invalid_input", body
    assert said in body["error"]["message"]
    _, exported = await stack.call("GET", ws(tenant, "/watches/export"), tenant)
    assert exported["data"]["watches"] == []


async def test_an_import_past_the_watch_budget_creates_nothing(
    stack: Stack, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory()
    budget = stack.services.settings.max_watches
    document = {"format": "lookout.watches", "version": 1, "watches": [
        {"message": f"what is on https://shop.example/{n}", "cadence": "0 9 * * *"}
        for n in range(budget + 1)]}  # fmt: skip

    status, body = await stack.call(
        "POST", ws(tenant, "/watches/import"), tenant, json={"source": "lookout", "file": document}
    )

    assert status == 409 and body["error"]["code"] == "conflict", body
    count = await db.fetchval("SELECT count(*) FROM automations WHERE workspace_id = $1",
                              tenant.workspace.id)  # fmt: skip
    assert count == 0


async def test_viewers_may_export_but_not_import(
    stack: Stack, tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory()
    viewer_headers = await _viewer_headers(stack, db, tenant)
    exported = await stack.client.get(ws(tenant, "/watches/export"), **viewer_headers)
    imported = await stack.client.post(
        ws(tenant, "/watches/import"), json={"source": "changedetection.io", "file": cdio_sample()},
        **viewer_headers,
    )  # fmt: skip
    assert (exported.status, imported.status) == (200, 403)


async def _viewer_headers(stack: Stack, db: asyncpg.Pool, tenant: Tenant) -> dict[str, Any]:
    cookie = await factories.member_cookie(db, stack.services.settings, tenant, role="viewer")
    return {"cookies": cookie, "headers": {"Origin": factories.page_origin(stack.client)}}


async def test_a_feed_lists_the_run_where_a_condition_became_true_even_without_a_diff(
    stack: Stack, tenant_factory: TenantFactory, page: dict[str, Any], db: asyncpg.Pool
) -> None:
    # Given a watch told to say when the menu mentions "Fresh bread", which it does at once
    tenant = await tenant_factory()
    chat = await repo.insert_chat(
        db, workspace_id=tenant.workspace.id, created_by=tenant.user.id, title="bread"
    )
    mentions = {"kind": "mentions", "value": None, "text": "Fresh bread", "unit": None}
    watch = await service.create(
        db, stack.services.settings, owner(tenant), chat=chat,
        message=f"tell me when {page['url']} mentions fresh bread", cadence="0 * * * *",
        condition=mentions,
    )  # fmt: skip
    made = await make_feed(stack, tenant, watch_id=str(watch.id))

    # When it is checked (a first look: no diff), checked again unchanged (still met)
    assert await stack.run(watch) == "succeeded"
    assert await stack.run(watch) == "succeeded"

    # Then the feed has the one run where the condition became true, and says so
    entries = ET.fromstring((await read_feed(stack, made["url"]))[1]).findall(f"{ATOM}entry")
    assert len(entries) == 1
    title = entries[0].findtext(f"{ATOM}title") or ""
    assert title == "Lookout: Condition met: the page mentions “Fresh bread”."
    assert "mentions fresh bread" in (entries[0].findtext(f"{ATOM}content") or "")

    # When the bread goes (a change, not met) and comes back (a change, met again)
    page["lines"] = ["Soup of the day"]
    assert await stack.run(watch) == "succeeded"
    page["lines"] = ["Soup of the day", "Fresh bread"]
    assert await stack.run(watch) == "succeeded"

    # Then both changes are listed too, the newest saying the condition is met again
    entries = ET.fromstring((await read_feed(stack, made["url"]))[1]).findall(f"{ATOM}entry")
    titles = [entry.findtext(f"{ATOM}title") or "" for entry in entries]
    assert len(titles) == 3 and titles[0] == titles[2] and "Condition met" not in titles[1]
    assert "Fresh bread" in (entries[0].findtext(f"{ATOM}content") or "")


async def test_imported_tags_are_on_the_watches_page_and_filter_it(
    stack: Stack, tenant_factory: TenantFactory
) -> None:
    # Given a changedetection.io backup imported, and a watch of another workspace with a tag
    tenant, other = await tenant_factory(), await tenant_factory()
    for who in (tenant, other):
        status, _ = await stack.call(
            "POST", ws(who, "/watches/import"), who,
            json={"source": "changedetection.io", "file": cdio_sample()},
        )  # fmt: skip
        assert status == 201

    # When the watches page is read, Then each row carries its tags
    _, listed = await stack.call("GET", "/api/watches", tenant)
    tags = {row["chat_title"]: row["tags"] for row in listed["data"]["watches"]}
    assert tags == {
        "Oat milk price": ["Groceries"],
        "Release notes — News Example": ["Work", "changelog"],
        "Status page": [],
    }

    # And filtered by a tag (case and spaces aside), only its watches, of this workspace only
    for asked in ("work", " WORK "):
        status, found = await stack.call("GET", "/api/watches", tenant, params={"tag": asked})
        assert status == 200, found
        assert [r["chat_title"] for r in found["data"]["watches"]] == [
            "Release notes — News Example"
        ]
    _, none = await stack.call("GET", "/api/watches", tenant, params={"tag": "Nope"})
    assert none["data"]["watches"] == []
    for bad in ({"tag": "x" * 51}, {"tag": ""}, {"label": "Work"}):
        status, refused = await stack.call("GET", "/api/watches", tenant, params=bad)
        assert status == 400 and refused["error"]["code"] == "invalid_input", refused
