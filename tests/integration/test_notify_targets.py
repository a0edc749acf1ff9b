"""A workspace's notification targets over REST: create, list, test, delete; secrets kept;
the SSRF rules; roles and tenancy; a watch's notification settings."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import asyncpg
import pytest

from lookout import app, errors
from lookout.notify import message, reach, via_apprise
from lookout.settings import Settings
from tests.integration import factories
from tests.integration.factories import Tenant, TenantFactory, member_cookie, tenant_factory
from tests.integration.test_notify_watches import (
    Receiver,
    Stack,
    add_target,
    history,
    page,
    receiver,
    stack,
    watched,
)

__all__ = ["page", "receiver", "stack", "tenant_factory"]

SECRETS = ("S3CRETPW", "S3CRETPATH", "S3CRETQ", "S3CRETHOOK")


def path(tenant: Tenant, tail: str = "") -> str:
    return f"/api/workspaces/{tenant.workspace.id}/notification-targets{tail}"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_targets_are_created_listed_tested_and_deleted(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    hook = await add_target(stack, tenant, receiver.url("/hook"), default=True)
    jsonish = await add_target(stack, tenant, receiver.url("/j").replace("http", "json", 1))
    other = await add_target(stack, tenant, receiver.url("/hook2"), default=True)
    hook_id = hook["target"]["id"]

    _, listed = await stack.call("GET", path(tenant), tenant)
    status, tested = await stack.call("POST", path(tenant, f"/{hook_id}/test"), tenant)
    _, tested_json = await stack.call(
        "POST", path(tenant, f"/{jsonish['target']['id']}/test"), tenant
    )
    deleted, _ = await stack.call("DELETE", path(tenant, f"/{hook_id}"), tenant)
    again, _ = await stack.call("DELETE", path(tenant, f"/{hook_id}"), tenant)

    targets = listed["data"]["targets"]
    assert [(t["kind"], t["default"], t["signed"]) for t in targets] == [
        ("webhook", False, True),
        ("apprise", False, False),
        ("webhook", True, True),
    ]  # a new default replaces the old one
    assert hook["signing_secret"].startswith("whsec_") and "signing_secret" not in jsonish
    assert other["target"]["default"] is True
    assert status == 200 and tested["data"]["sent"] is True and tested["data"]["error"] is None
    headers, raw = receiver.got[0]
    assert json.loads(raw)["event"] == "test"
    assert message.verify(hook["signing_secret"], raw, headers["X-Lookout-Signature"])
    assert tested_json["data"]["sent"] is True
    assert receiver.bodies()[1]["title"] == "Lookout: test notification"
    assert (deleted, again) == (200, 404)


async def test_a_failing_test_says_why(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    receiver.status = 500
    down = await add_target(stack, tenant, receiver.url())
    gone = await add_target(stack, tenant, f"json://127.0.0.1:{closed_port()}/x")

    _, answered = await stack.call("POST", path(tenant, f"/{down['target']['id']}/test"), tenant)
    _, refused = await stack.call("POST", path(tenant, f"/{gone['target']['id']}/test"), tenant)

    assert answered["data"]["sent"] is False
    assert "answered HTTP 500" in answered["data"]["error"]
    assert refused["data"]["sent"] is False and refused["data"]["error"]


async def test_secrets_never_appear_in_answers_or_logs(
    stack: Stack,
    tenant_factory: TenantFactory,
    receiver: Receiver,
    page: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    tenant = await tenant_factory()
    port = closed_port()
    urls = [
        receiver.url("/in/S3CRETHOOK?key=S3CRETQ"),
        f"json://user:S3CRETPW@127.0.0.1:{port}/S3CRETPATH?token=S3CRETQ",
        receiver.url("/S3CRETPATH").replace("http://", "json://user:S3CRETPW@", 1),
        f"https://user:S3CRETPW@127.0.0.1:{port}/S3CRETPATH",
    ]
    answers = []
    for url in urls:
        created = await add_target(stack, tenant, url, default=url == urls[1])
        answers.append(created["target"])
        answers.append(await stack.call("POST", path(tenant, f"/{created['target']['id']}/test"),
                                        tenant))  # fmt: skip
    answers.append(await stack.call("GET", path(tenant), tenant))
    watch, summary = await watched(stack, tenant, page["url"])
    await stack.run(watch)
    page["lines"] = ["Soup of the day", "Apple tart"]
    await stack.run(watch)
    answers += [summary, await history(stack, tenant, watch)]

    said = json.dumps(answers) + caplog.text
    assert [secret for secret in SECRETS if secret in said] == []
    [failed] = (await history(stack, tenant, watch))[1]["deliveries"]
    assert failed["status"] == "retrying" and failed["last_error"]


async def test_private_hosts_are_refused_unless_the_operator_allows_them(
    settings: Settings, aiohttp_client: Any, tenant_factory: TenantFactory, receiver: Receiver
) -> None:
    tenant = await tenant_factory()
    public_only = await aiohttp_client(
        app.create_app(settings.replace(allow_private_networks=False))
    )
    allowed = await aiohttp_client(
        app.create_app(settings.replace(allow_private_networks=False, notify_allow_private=True))
    )

    async def create(client: Any, url: str) -> tuple[int, Any]:
        body = {"name": url[:90], "url": url}
        response = await client.post(path(tenant), json=body, headers=tenant.headers)
        return response.status, await response.json()

    refused = [
        await create(public_only, url)
        for url in (receiver.url("/S3CRETPATH"), "json://127.0.0.1/x", "ntfy://localhost/topic",
                    "https://169.254.169.254/latest", "mailtos://u:p@example.com?smtp=10.0.0.5")
    ]  # fmt: skip
    status, made = await create(allowed, receiver.url())
    target_id = made["data"]["target"]["id"]
    tested = await public_only.post(path(tenant, f"/{target_id}/test"), headers=tenant.headers)
    at_send = (await tested.json())["data"]

    assert [s for s, _ in refused] == [422] * 5
    assert {b["error"]["code"] for _, b in refused} == {"blocked_destination"}
    assert "LOOKOUT_NOTIFY_ALLOW_PRIVATE" in refused[0][1]["error"]["message"]
    assert "S3CRETPATH" not in json.dumps(refused[0][1])
    assert status == 201
    assert at_send["sent"] is False and "does not notify 127.0.0.1" in at_send["error"]
    assert receiver.got == []


class Flip:
    """DNS for `name`: a public address for the first lookup, this machine's for the rest."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.name, self.lookups = name, 0
        self.system = reach._system_getaddrinfo
        monkeypatch.setattr(reach, "_system_getaddrinfo", self.getaddrinfo)

    def getaddrinfo(self, host: Any, port: Any, *args: Any) -> Any:
        if host != self.name:
            return self.system(host, port, *args)
        self.lookups += 1
        address = "93.184.216.34" if self.lookups == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]


async def test_an_apprise_host_rebound_inwards_after_the_check_is_refused(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    flip = Flip(monkeypatch, "flip.example")
    url = receiver.url("/S3CRETPATH").replace("http://127.0.0.1", "json://flip.example", 1)
    public_only = settings.replace(allow_private_networks=False)

    with pytest.raises(errors.BlockedDestination) as refused:
        await via_apprise.send(url, "title", "body", public_only)

    assert flip.lookups == 2  # the check before the send saw the public address
    # which rule refused the host is said; the internal address it resolved to is not
    assert "flip.example resolves to a loopback address" in refused.value.message
    assert "127.0.0.1" not in str(refused.value.message) + str(refused.value.details)
    assert refused.value.details["rule"] == reach.RULE_PRIVATE
    assert "LOOKOUT_NOTIFY_ALLOW_PRIVATE" in refused.value.message
    assert receiver.got == []


async def test_an_apprise_host_private_by_the_operators_leave_is_notified(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    flip = Flip(monkeypatch, "flip.example")
    url = receiver.url("/hook").replace("http://127.0.0.1", "json://flip.example", 1)
    allowed = settings.replace(allow_private_networks=False, notify_allow_private=True)

    await via_apprise.send(url, "title", "body", allowed)

    assert flip.lookups == 2
    assert [body["title"] for body in receiver.bodies()] == ["title"]


async def test_viewers_list_but_cannot_change_and_other_workspaces_see_nothing(
    stack: Stack,
    tenant_factory: TenantFactory,
    receiver: Receiver,
    db: asyncpg.Pool,
    settings: Settings,
    page: dict[str, Any],
) -> None:
    owner, stranger = await tenant_factory(), await tenant_factory()
    target_id = (await add_target(stack, owner, receiver.url()))["target"]["id"]
    watch, _ = await watched(stack, owner, page["url"])
    client = stack.client
    client.session.cookie_jar.update_cookies(
        await member_cookie(db, settings, owner, role="viewer")
    )
    origin = {"Origin": factories.page_origin(client)}

    listed = await client.get(path(owner))
    made = await client.post(path(owner), json={"name": "x", "url": receiver.url()}, headers=origin)
    removed = await client.delete(path(owner, f"/{target_id}"), headers=origin)
    patched = await client.patch(
        f"/api/automations/{watch.id}", json={"notify": {"enabled": False}}, headers=origin
    )
    foreign = [
        await stack.call("DELETE", path(stranger, f"/{target_id}"), stranger),
        await stack.call("POST", path(stranger, f"/{target_id}/test"), stranger),
        await stack.call("GET", path(owner), stranger),
        await stack.call("PATCH", f"/api/automations/{watch.id}", stranger,
                         json={"notify": {"enabled": False}}),
    ]  # fmt: skip

    assert listed.status == 200 and len((await listed.json())["data"]["targets"]) == 1
    assert (made.status, removed.status, patched.status) == (403, 403, 403)
    assert [status for status, _ in foreign] == [404, 404, 404, 404]


async def test_a_watch_only_accepts_its_workspaces_targets_and_sane_settings(
    stack: Stack, tenant_factory: TenantFactory, receiver: Receiver, page: dict[str, Any]
) -> None:
    owner, stranger = await tenant_factory(), await tenant_factory()
    theirs = (await add_target(stack, stranger, receiver.url()))["target"]["id"]
    watch, _ = await watched(stack, owner, page["url"])

    async def patch(notify: dict[str, Any]) -> int:
        status, _ = await stack.call(
            "PATCH", f"/api/automations/{watch.id}", owner, json={"notify": notify}
        )
        return int(status)

    assert await patch({"targets": [theirs]}) == 400
    assert await patch({"compared_versions": 0}) == 400
    assert await patch({"compared_versions": 11}) == 400
    assert await patch({"enabled": True, "surprise": 1}) == 400
    assert await patch({"enabled": False, "compared_versions": 3}) == 200
    _, listed = await stack.call("GET", "/api/automations/watches", owner)
    assert listed["data"]["watches"][0]["notify"] == {
        "enabled": False, "targets": None, "compared_versions": 3
    }  # fmt: skip
