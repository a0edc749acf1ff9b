"""Test factories for the REST door: workspaces with credits, keys, members, a local page site."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lookout import appkeys
from lookout.access import accounts, auth
from lookout.db import repo
from lookout.settings import Settings


def page_origin(client: Any) -> str:
    """The Origin a browser on the app's own pages sends: its configured LOOKOUT_PUBLIC_URL's
    (the app never trusts the request's Host for it)."""
    origin: str = client.server.app[appkeys.SETTINGS].public_origin
    return origin


@dataclasses.dataclass(frozen=True)
class Tenant:
    user: repo.User
    workspace: repo.Workspace
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


TenantFactory = Callable[..., Awaitable[Tenant]]


@pytest.fixture
def tenant_factory(db: asyncpg.Pool) -> TenantFactory:
    """make(credits=..., rate_limit=...) -> a user owning a workspace with credits and a key."""

    async def make(*, credits: int = 100, rate_limit: int | None = 10_000) -> Tenant:
        email = f"user-{uuid.uuid4().hex[:8]}@example.com"
        user = await accounts.create_user(db, email=email, password="correct horse battery")
        workspace = await accounts.create_workspace(
            db, name="Test", owner_id=user.id, credits=credits
        )
        key = await accounts.create_key(
            db, workspace_id=workspace.id, name="test", rate_limit_per_minute=rate_limit
        )
        return Tenant(user=user, workspace=workspace, key=key.text)

    return make


async def member_cookie(
    db: asyncpg.Pool, settings: Settings, tenant: Tenant, *, role: str
) -> dict[str, str]:
    """A new user with `role` in the tenant's workspace, signed in: the cookie to send."""
    email = f"member-{uuid.uuid4().hex[:8]}@example.com"
    user = await accounts.create_user(db, email=email, password="correct horse battery")
    await repo.add_membership(db, workspace_id=tenant.workspace.id, user_id=user.id, role=role)
    token = await auth.new_session(db, settings, user.id)
    return {auth.COOKIE: token}


@dataclasses.dataclass
class Site:
    """A local site; `hits` counts requests per path, `delay` slows /slow/* pages."""

    server: TestServer
    hits: dict[str, int]
    delay: float = 0.0

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))


@pytest.fixture
async def site(aiohttp_server: Any) -> Site:
    hits: dict[str, int] = {}
    holder: dict[str, Site] = {}

    async def page(request: web.Request) -> web.Response:
        hits[request.path] = hits.get(request.path, 0) + 1
        if request.path.startswith("/slow/"):
            await asyncio.sleep(holder["site"].delay)
        if request.path.startswith("/missing"):
            raise web.HTTPNotFound()
        title = request.path.strip("/") or "home"
        html = f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
        html += "<p>" + "Some real content about this page. " * 20 + "</p></main></body></html>"
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    server = await aiohttp_server(app)
    holder["site"] = Site(server=server, hits=hits)
    return holder["site"]
