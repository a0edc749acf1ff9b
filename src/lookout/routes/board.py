"""The watches page, a watch's history of checks and the workspace's watch settings: thin
handlers over watches.board, watches.history and watches.workspace."""

from __future__ import annotations

import uuid
from typing import Any

import marshmallow
from aiohttp import web

from lookout import appkeys, errors
from lookout.routes import authn, common
from lookout.routes import openapi_board as schema
from lookout.watches import board, history, workspace


def _uuid(request: web.Request, name: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info[name])
    except ValueError:
        raise errors.NotFound(f"No such {what}.") from None


def _load(kind: type[marshmallow.Schema], data: Any, what: str) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = kind().load(data)
    except marshmallow.ValidationError as exc:
        details = exc.normalized_messages()  # type: ignore[no-untyped-call]
        raise errors.InvalidInput(f"The {what} is not valid.", fields=details) from None
    return loaded


async def list_watches(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    query = _load(schema.WatchesQuery, dict(request.query), "query")
    rows = await board.listing(request.app[appkeys.DB], principal, query["tag"])
    return common.ok(request, {"watches": rows})


async def bulk(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    body = _load(schema.Bulk, await common.json_body(request), "bulk action")
    results = await board.apply(
        request.app[appkeys.DB], request.app[appkeys.SETTINGS], principal, body["action"],
        body["ids"],
    )  # fmt: skip
    return common.ok(request, {"action": body["action"], "results": results})


async def list_checks(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    query = _load(schema.HistoryQuery, dict(request.query), "query")
    found = await history.checks(
        request.app[appkeys.DB], principal, _uuid(request, "automation_id", "watch"),
        before=query["before"], limit=query["limit"],
    )  # fmt: skip
    return common.ok(request, found)


async def get_check(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    query = _load(schema.CheckQuery, dict(request.query), "query")
    found = await history.check_pages(
        request.app[appkeys.DB], principal, _uuid(request, "automation_id", "watch"),
        _uuid(request, "run_id", "check of this watch"), query["against"],
    )  # fmt: skip
    return common.ok(request, found)


async def get_settings(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    return common.ok(request, await workspace.get(request.app[appkeys.DB], principal))


async def update_settings(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    body = _load(schema.PrefsChange, await common.json_body(request), "change")
    if not body:
        raise errors.InvalidInput("Send timezone and/or history_retention_days.")
    return common.ok(request, await workspace.update(request.app[appkeys.DB], principal, body))


def setup(app: web.Application) -> None:
    app.router.add_get("/api/watches", list_watches)
    app.router.add_post("/api/watches/bulk", bulk)
    app.router.add_get("/api/automations/{automation_id}/history", list_checks)
    app.router.add_get("/api/automations/{automation_id}/history/{run_id}", get_check)
    app.router.add_get("/api/workspaces/{ws}/watch-settings", get_settings)
    app.router.add_patch("/api/workspaces/{ws}/watch-settings", update_settings)
