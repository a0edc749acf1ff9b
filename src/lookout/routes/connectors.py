"""A workspace's MCP connectors: list (any member), create, delete and test (editors and owners)."""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web

from lookout import appkeys
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.mcp import connectors
from lookout.routes import authn, common, owned
from lookout.schema import connectors as schema


async def list_connectors(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    found = await connectors.list_all(services, principal)
    chat_use = await connectors.chat_use_ids(services, principal.workspace_id)
    views = [connectors.view(services, c, chat_use=c.id in chat_use) for c in found]
    return common.ok(request, {"connectors": schema.ConnectorSchema(many=True).dump(views)})


async def create_connector(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    principal.require("editor")
    body = schema.load(schema.NewConnectorSchema(), await common.json_body(request))
    services = appkeys.services(request.app)
    created = await connectors.create(services, principal, **body)
    view = connectors.view(services, created, chat_use=body["chat_use"])
    return common.ok(request, {"connector": schema.ConnectorSchema().dump(view)}, status=201)


delete_connector = owned.deleter(connectors.KIND, "connector_id")


async def update_connector(request: web.Request) -> web.Response:
    """Mark a connector for chat use or unmark it (`{"chat_use": true|false}`)."""
    principal = await authn.authenticate(request)
    body = schema.load(schema.ConnectorPatchSchema(), await common.json_body(request))
    services = appkeys.services(request.app)
    connector_id = _connector_id(request)
    await connectors.set_chat_use(services, principal, connector_id, body["chat_use"])
    view = await _view(services, principal, connector_id)
    return common.ok(request, {"connector": schema.ConnectorSchema().dump(view)})


async def _view(
    services: Services, principal: Principal, connector_id: uuid.UUID
) -> dict[str, Any]:
    connector = await connectors.get(services, principal, connector_id)
    chat_use = connector.id in await connectors.chat_use_ids(services, principal.workspace_id)
    return connectors.view(services, connector, chat_use=chat_use)


async def test_connector(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    connector_id = _connector_id(request)
    tools = await connectors.test(services, principal, connector_id)
    view = await _view(services, principal, connector_id)
    data = schema.TestedSchema().dump({"connector": view, "tools": tools})
    return common.ok(request, data)


def _connector_id(request: web.Request) -> uuid.UUID:
    return owned.object_id(request, "connector_id", connectors.KIND)


ROUTES = owned.Routes(
    list_connectors, create_connector, delete_connector, update_connector, test_connector
)
