"""Watches over REST: list, create (integrations), run now, stop, run history."""

from __future__ import annotations

import uuid

import marshmallow
from aiohttp import web

from lookout import appkeys, errors
from lookout.chat import chats
from lookout.db import repo
from lookout.notify import deliveries
from lookout.notify import schema as notify_schema
from lookout.routes import authn, common
from lookout.schema import watches as watches_schema
from lookout.watches import controls, service

MAX_LISTED = 500


def _automation_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["automation_id"])
    except ValueError:
        raise errors.NotFound("No such watch in this workspace.") from None


def _run_view(run: repo.Run) -> dict[str, object]:
    def iso(value: object) -> str | None:
        return value.isoformat() if hasattr(value, "isoformat") else None

    return {
        "id": str(run.id), "scheduled_for": iso(run.scheduled_for), "manual": run.manual,
        "status": run.status, "attempts": run.attempts, "error": run.error,
        "started_at": iso(run.started_at), "finished_at": iso(run.finished_at),
        "changes": run.changes,
        "condition_met": run.condition_met, "value": run.value,
    }  # fmt: skip


def _run_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["run_id"])
    except ValueError:
        raise errors.NotFound("No such run of this watch.") from None


async def list_watches(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await service.list_all(request.app[appkeys.DB], principal, limit=MAX_LISTED)
    return common.ok(request, {"watches": [service.summary(a) for a in found]})


async def create_watch(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    try:
        body = watches_schema.NewWatch().load(await common.json_body(request))
    except marshmallow.ValidationError as exc:
        details = exc.normalized_messages()  # type: ignore[no-untyped-call]
        raise errors.InvalidInput("The watch is not valid.", fields=details) from None
    db = request.app[appkeys.DB]
    chat = await chats.get(db, principal, body["chat_id"])
    automation = await service.create(
        db, request.app[appkeys.SETTINGS], principal, chat=chat, message=body["message"],
        cadence=body["cadence"], timezone=body["timezone"], condition=body["condition"],
    )  # fmt: skip
    return common.ok(request, await service.described(db, automation), status=201)


async def run_watch(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    run_id = await service.run_now(request.app[appkeys.DB], principal, _automation_id(request))
    return common.ok(request, {"run_id": str(run_id), "status": "queued"}, status=202)


async def stop_watch(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    await service.stop(request.app[appkeys.DB], principal, _automation_id(request))
    return web.Response(status=204)


async def list_runs(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    db = request.app[appkeys.DB]
    runs = await service.runs(db, principal, _automation_id(request), limit=100)
    sent = await deliveries.history(db, principal.workspace_id, [run.id for run in runs])
    views = [{**_run_view(run), "deliveries": sent.get(run.id, [])} for run in runs]
    return common.ok(request, {"runs": views})


async def get_run(request: web.Request) -> web.Response:
    """One run of a watch: its status, what it found (`changes`) and its deliveries."""
    principal = await authn.authenticate(request)
    db = request.app[appkeys.DB]
    run = await service.get_run(db, principal, _automation_id(request), _run_id(request))
    sent = await deliveries.history(db, principal.workspace_id, [run.id])
    return common.ok(request, {**_run_view(run), "deliveries": sent.get(run.id, [])})


async def update_watch(request: web.Request) -> web.Response:
    """PATCH a watch in place: its history, versions and deliveries stay."""
    principal = await authn.authenticate(request)
    try:
        body = notify_schema.WatchChangeSchema().load(await common.json_body(request))
    except marshmallow.ValidationError as exc:
        details = exc.normalized_messages()  # type: ignore[no-untyped-call]
        raise errors.InvalidInput("The watch change is not valid.", fields=details) from None
    if not body:
        raise errors.InvalidInput(
            "Send at least one of message, cadence, timezone, condition, enabled, notify."
        )
    db, automation_id = request.app[appkeys.DB], _automation_id(request)
    notify = body.pop("notify", None)
    updated = None
    if body:
        updated = await controls.edit(db, request.app[appkeys.SETTINGS], principal, automation_id,
                                      body)  # fmt: skip
    if notify is not None:
        updated = await service.update_notify(db, principal, automation_id, notify)
    assert updated is not None
    return common.ok(request, await service.described(db, updated))
