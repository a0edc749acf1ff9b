"""The routes of what a workspace keeps by name (access/owned.py): the object's id from the path,
the DELETE handler every such kind shares and the one route table they all have; a route
file adds its list, create, change and test handlers (their bodies and views are its own)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from lookout import appkeys
from lookout.access import owned
from lookout.routes import authn, common

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def object_id(request: web.Request, param: str, kind: owned.Owned[Any]) -> uuid.UUID:
    """The id in the path; a malformed one is simply not found, like another workspace's."""
    try:
        return uuid.UUID(request.match_info[param])
    except ValueError:
        raise kind.not_found() from None


def deleter(kind: owned.Owned[Any], param: str) -> Handler:
    """DELETE …/{param}: editors and owners; another workspace's object is not_found."""

    async def delete(request: web.Request) -> web.Response:
        principal = await authn.authenticate(request)
        services = appkeys.services(request.app)
        await kind.delete(services, principal, object_id(request, param, kind))
        return common.ok(request, {"deleted": True})

    return delete


@dataclasses.dataclass(frozen=True)
class Routes:
    """The handlers of one kind: its collection (list, create) and one object (delete, change,
    test)."""

    list: Handler
    create: Handler
    delete: Handler
    update: Handler
    test: Handler


def add(app: web.Application, path: str, param: str, routes: Routes) -> None:
    """GET/POST `path`, DELETE/PATCH `path`/{param}, POST `path`/{param}/test."""
    one = f"{path}/{{{param}}}"
    app.router.add_get(path, routes.list)
    app.router.add_post(path, routes.create)
    app.router.add_delete(one, routes.delete)
    app.router.add_patch(one, routes.update)
    app.router.add_post(f"{one}/test", routes.test)
