"""A workspace's notification targets: list (any member), create, delete and test (editors and
owners). Answers show a target's scheme and host, never its URL's secrets."""

from __future__ import annotations

import uuid

from aiohttp import web

from lookout import appkeys
from lookout.notify import schema, targets
from lookout.routes import authn, common, owned
from lookout.schema import connectors as common_schema


async def list_targets(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await targets.list_all(appkeys.services(request.app), principal)
    views = [targets.view(target) for target in found]
    return common.ok(request, {"targets": schema.TargetSchema(many=True).dump(views)})


async def create_target(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    principal.require("editor")
    body = common_schema.load(schema.NewTargetSchema(), await common.json_body(request))
    created, signing_secret = await targets.create(
        appkeys.services(request.app), principal, name=body["name"], url=body["url"],
        default=body["default"], signing_secret=body["secret"],
    )  # fmt: skip
    data: dict[str, object] = {"target": schema.TargetSchema().dump(targets.view(created))}
    if signing_secret is not None:
        # Shown this once, like an API key: the receiver needs it to check signatures.
        data["signing_secret"] = signing_secret
    return common.ok(request, data, status=201)


delete_target = owned.deleter(targets.KIND, "target_id")


async def update_target(request: web.Request) -> web.Response:
    """PATCH a target: make it the workspace's default (or not)."""
    principal = await authn.authenticate(request)
    body = common_schema.load(schema.TargetChangeSchema(), await common.json_body(request))
    changed = await targets.set_default(
        appkeys.services(request.app), principal, _target_id(request), body["default"]
    )
    return common.ok(request, {"target": schema.TargetSchema().dump(targets.view(changed))})


async def test_target(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    target, error = await targets.test(services, principal, _target_id(request))
    view = schema.TargetSchema().dump(targets.view(target))
    return common.ok(request, {"target": view, "sent": error is None, "error": error})


def _target_id(request: web.Request) -> uuid.UUID:
    return owned.object_id(request, "target_id", targets.KIND)


ROUTES = owned.Routes(list_targets, create_target, delete_target, update_target, test_target)
