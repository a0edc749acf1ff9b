"""Notification settings from the Settings screen: making a target the default, and a watch's
answer that promises a notification only when one will be sent."""

from __future__ import annotations

import asyncpg
import pytest

from lookout.notify import prefs
from lookout.settings import Settings
from tests.integration import factories
from tests.integration.factories import Tenant, TenantFactory, member_cookie, tenant_factory
from tests.integration.test_notify_watches import (
    Receiver,
    Stack,
    add_target,
    page,
    receiver,
    stack,
    watched,
)

__all__ = ["page", "receiver", "stack", "tenant_factory"]


def path(tenant: Tenant, tail: str = "") -> str:
    return f"/api/workspaces/{tenant.workspace.id}/notification-targets{tail}"


async def defaults(stack: Stack, tenant: Tenant) -> dict[str, bool]:
    status, body = await stack.call("GET", path(tenant), tenant)
    assert status == 200, body
    return {t["name"]: t["default"] for t in body["data"]["targets"]}


async def test_a_target_becomes_the_default_and_the_old_one_stops_being_it(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    first = (await add_target(stack, tenant, receiver.url("/a"), default=True))["target"]
    second = (await add_target(stack, tenant, receiver.url("/b")))["target"]

    status, body = await stack.call(
        "PATCH", path(tenant, f"/{second['id']}"), tenant, json={"default": True}
    )

    assert status == 200, body
    assert body["data"]["target"]["default"] is True
    assert await defaults(stack, tenant) == {first["name"]: False, second["name"]: True}
    status, _ = await stack.call(
        "PATCH", path(tenant, f"/{second['id']}"), tenant, json={"default": False}
    )
    assert status == 200
    assert await defaults(stack, tenant) == {first["name"]: False, second["name"]: False}


@pytest.mark.parametrize(
    "body", [{}, {"default": "yes please"}, {"default": True, "url": "https://x.example"}, []]
)
async def test_a_bad_default_change_is_refused_with_the_envelope(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver, body: object
) -> None:
    tenant = await tenant_factory()
    target = (await add_target(stack, tenant, receiver.url()))["target"]

    status, answer = await stack.call("PATCH", path(tenant, f"/{target['id']}"), tenant, json=body)

    assert status == 400, answer
    assert answer["ok"] is False and answer["error"]["code"] == "invalid_input"


async def test_another_workspace_cannot_make_its_target_the_default_and_viewers_cannot(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver, db: asyncpg.Pool,
    settings: Settings,
) -> None:  # fmt: skip
    a, b = await tenant_factory(), await tenant_factory()
    target = (await add_target(stack, a, receiver.url()))["target"]

    other, body = await stack.call("PATCH", path(a, f"/{target['id']}"), b, json={"default": True})
    mine, _ = await stack.call("PATCH", path(b, f"/{target['id']}"), b, json={"default": True})
    nonsense, _ = await stack.call("PATCH", path(a, "/not-a-uuid"), a, json={"default": True})
    viewer = await member_cookie(db, settings, a, role="viewer")
    response = await stack.client.patch(
        path(a, f"/{target['id']}"), json={"default": True}, cookies=viewer,
        headers={"Origin": factories.page_origin(stack.client)},
    )  # fmt: skip

    assert (other, mine, nonsense, response.status) == (404, 404, 404, 403), body
    assert await defaults(stack, a) == {target["name"]: False}


async def test_a_watch_promises_a_notification_only_when_a_target_will_get_it(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver, page: dict[str, object]
) -> None:
    # Given a workspace with no notification target, a watch with notifications on
    tenant = await tenant_factory()
    watch, summary = await watched(stack, tenant, str(page["url"]))

    # Then its answer says how to set one up, and promises nothing
    assert "Settings → Notifications" in summary["sentence"]
    assert "I'll also send" not in summary["sentence"]

    # When a default target is added, the answer names where the notification goes
    target = (await add_target(stack, tenant, receiver.url(), default=True))["target"]
    status, body = await stack.call(
        "PATCH", f"/api/automations/{watch.id}", tenant, json={"notify": {"enabled": True}}
    )
    assert status == 200
    assert f"send a notification to “{target['name']}”" in body["data"]["sentence"]

    # And muted, it says nothing about notifications
    status, body = await stack.call(
        "PATCH", f"/api/automations/{watch.id}", tenant, json={"notify": {"enabled": False}}
    )
    assert status == 200 and "notif" not in body["data"]["sentence"]


def test_the_sentence_names_chosen_targets_and_the_set_up_path() -> None:
    on = prefs.WatchNotify(enabled=True)

    assert prefs.sentence(on, ()) == prefs.SET_UP
    assert "“ops” and “me”" in prefs.sentence(prefs.WatchNotify(True, ()), ("ops", "me"))
    assert "default notification target" in prefs.sentence(on, ("ops",))
    assert prefs.sentence(prefs.WatchNotify(), ()) == ""
