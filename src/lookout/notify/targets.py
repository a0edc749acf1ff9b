"""A workspace's notification targets: stored with their URL (and webhook signing key) sealed,
shown as scheme and host only, tested by sending a test notification now."""

from __future__ import annotations

import datetime as dt
import secrets as random
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access import owned
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.db import feeds as feeds_db
from lookout.db import repo
from lookout.notify import channels, message, prefs, reach, via_apprise, webhook

MAX_TARGETS = 20
_URL_PURPOSE = "notification-target-url"
_SIGNING_PURPOSE = "notification-target-signing"
SIGNING_PREFIX = "whsec_"

KIND: owned.Owned[repo.NotificationTarget] = owned.Owned(
    missing="No such notification target in this workspace.",
    full=f"This workspace already has {MAX_TARGETS} notification targets; delete one first.",
    taken="This workspace already has a target named {name!r}.",
    most=MAX_TARGETS,
    list_rows=lambda db, ws: repo.list_notification_targets(db, workspace_id=ws),
    get_row=lambda db, ws, id_: repo.get_notification_target(db, target_id=id_, workspace_id=ws),
    delete_row=lambda db, ws, id_: repo.delete_notification_target(
        db, target_id=id_, workspace_id=ws
    ),
    count_rows=lambda db, ws: repo.count_notification_targets(db, workspace_id=ws),
)
list_all, get, delete = KIND.list_all, KIND.get, KIND.delete


async def create(
    services: Services,
    principal: Principal,
    *,
    name: str,
    url: str,
    default: bool = False,
    signing_secret: str | None = None,
) -> tuple[repo.NotificationTarget, str | None]:
    """Store a target whose hosts pass the SSRF rules; returns it and, for a webhook, the signing
    secret when Lookout made it (shown this once)."""
    principal.require("editor")
    channel = channels.parse(url)
    if channel.kind != "webhook" and signing_secret:
        raise errors.InvalidInput("Only webhook (http/https) targets are signed.")
    await KIND.check_room(services, principal)
    await reach.check_hosts(channel.hosts, services.settings)
    made = None
    if channel.kind == "webhook" and not signing_secret:
        made = signing_secret = SIGNING_PREFIX + random.token_urlsafe(32)
    target = await _insert(services, principal, name, url.strip(), channel, default, signing_secret)
    return target, made


async def _insert(
    services: Services,
    principal: Principal,
    name: str,
    url: str,
    channel: channels.Channel,
    default: bool,
    signing_secret: str | None,
) -> repo.NotificationTarget:
    target_id = uuid.uuid4()
    sealed_url = owned.seal(services, _URL_PURPOSE, target_id, url.encode())
    signing = None
    if signing_secret:
        signing = owned.seal(services, _SIGNING_PURPOSE, target_id, signing_secret.encode())
    with KIND.named(name):
        async with repo.transaction(services.db) as conn:
            if default:
                await repo.clear_default_notification_target(
                    conn, workspace_id=principal.workspace_id
                )
            return await repo.insert_notification_target(
                conn, target_id=target_id, workspace_id=principal.workspace_id, name=name,
                kind=channel.kind, display=channel.display,
                url_encrypted=sealed_url,
                signing_encrypted=signing, is_default=default, created_by=principal.user_id,
            )  # fmt: skip


async def set_default(
    services: Services, principal: Principal, target_id: uuid.UUID, is_default: bool
) -> repo.NotificationTarget:
    """Make the target the workspace's default (the old default stops being one), or not."""
    principal.require("editor")
    async with repo.transaction(services.db) as conn:
        if is_default:
            await repo.clear_default_notification_target(conn, workspace_id=principal.workspace_id)
        found = await feeds_db.set_target_default(
            conn, target_id=target_id, workspace_id=principal.workspace_id, is_default=is_default
        )
        if found is None:
            raise KIND.not_found()
    return found


async def reached(
    db: asyncpg.Pool, workspace_id: uuid.UUID, wanted: prefs.WatchNotify
) -> tuple[str, ...]:
    """The names of the targets a change of a watch with `wanted` would be sent to now."""
    chosen = None if wanted.targets is None else list(wanted.targets)
    found = await repo.notification_targets_for_watch(
        db, workspace_id=workspace_id, target_ids=chosen
    )
    return tuple(target.name for target in found)


async def test(
    services: Services, principal: Principal, target_id: uuid.UUID
) -> tuple[repo.NotificationTarget, str | None]:
    """Send a test notification now: the target, and None when it was taken, else why not."""
    principal.require("editor")
    target = await get(services, principal, target_id)
    now = dt.datetime.now(dt.UTC).isoformat()
    data = message.ping_payload(target.name, now)
    try:
        await send(services, target, data, delivery_id=f"test_{uuid.uuid4().hex}")
    except errors.LookoutError as exc:
        return target, exc.message
    return target, None


async def send(
    services: Services, target: repo.NotificationTarget, data: dict[str, Any], *, delivery_id: str
) -> None:
    """Send `data` to `target` once; raises a LookoutError saying why it was not taken."""
    url = url_of(services, target)
    if target.kind == "webhook":
        raw = message.encode({**data, "delivery_id": delivery_id})
        await webhook.post(
            services.http, services.settings, url, raw,
            secret=signing_secret_of(services, target), delivery_id=delivery_id,
            event=str(data["event"]),
        )  # fmt: skip
        return
    title, body = message.as_text(data)
    await via_apprise.send(url, title, body, services.settings)


def view(target: repo.NotificationTarget) -> dict[str, Any]:
    """What a member may see: never the URL's secrets nor the signing secret."""
    return {
        "id": target.id,
        "name": target.name,
        "kind": target.kind,
        "url": target.display,
        "default": target.is_default,
        "signed": target.signing_encrypted is not None,
        "created_at": target.created_at,
    }


def url_of(services: Services, target: repo.NotificationTarget) -> str:
    return owned.unseal(services, _URL_PURPOSE, target.id, target.url_encrypted).decode()


def signing_secret_of(services: Services, target: repo.NotificationTarget) -> str:
    if target.signing_encrypted is None:
        raise errors.Conflict("This webhook target has no signing secret; re-create it.")
    return owned.unseal(services, _SIGNING_PURPOSE, target.id, target.signing_encrypted).decode()


async def check_chosen(
    db: asyncpg.Pool, workspace_id: uuid.UUID, target_ids: tuple[uuid.UUID, ...] | None
) -> None:
    """InvalidInput unless every chosen target is one of the workspace's."""
    if not target_ids:
        return
    found = await repo.notification_targets_for_watch(
        db, workspace_id=workspace_id, target_ids=list(target_ids)
    )
    missing = set(target_ids) - {target.id for target in found}
    if missing:
        said = "No such notification target in this workspace: " + ", ".join(
            sorted(str(target_id) for target_id in missing)
        )
        raise errors.InvalidInput(said, fields={"targets": [said]})
