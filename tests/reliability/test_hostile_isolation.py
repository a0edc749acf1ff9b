"""Tenant isolation: every route of the router x every kind of caller → the documented status,
and nothing of one workspace in what another caller is answered.

The routes come from `app.router.routes()`, so a new route joins the matrix by itself; its path
parameters are filled with workspace A's objects (a route with a parameter nobody knows fails the
test), and a write needs a body in BODIES. The callers, against workspace A:

    own              A's owner, signed in (the MCP door: A's API key)
    other workspace  B's owner, signed in, asking for A's workspace (X-Lookout-Workspace) and ids
    other key        B's API key with A's ids
    no auth          no credentials at all
    revoked key      A's API key after it was revoked
    viewer           a viewer of A, signed in
    expired session  A's owner with a session past its expiry

Expected: own → the route's success status (OWN_STATUS, else 200); other workspace → 404; other
key → 404 when A's ids are in the path or body, else what own gets (B acting in B); no auth,
revoked key, expired session → 401; viewer → own's status for reads, 403 for writes. PUBLIC
lists the routes that answer everyone the same; MCP_DOOR the door that only takes API keys.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import secrets
import uuid
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest

from lookout import app
from lookout.access import accounts, auth
from lookout.db import repo
from lookout.routes import page
from lookout.settings import Settings
from tests.integration import factories, providers, sse
from tests.integration.factories import (
    Site,
    Tenant,
    TenantFactory,
    member_cookie,
    site,
    tenant_factory,
)
from tests.reliability import hostile_fixtures
from tests.reliability.hostile_fixtures import LeakWatch, leak_watch

__all__ = ["leak_watch", "site", "tenant_factory"]

COLUMNS = ("own", "other workspace", "other key", "no auth", "revoked key", "viewer",
           "expired session")  # fmt: skip
READS = ("GET", "HEAD")
PASSWORD = "correct horse battery staple"
TITLE = "Isolation-Marker-Title-7c1"
TEXT = "Isolation-Marker-Text-4e9"
METRICS_TOKEN = "metrics-token-" + "m" * 20

PUBLIC: dict[str, int] = {
    "/healthz": 200, "/readyz": 200, "/": 200, "/app/{version}/{path}": 200,
    "/v1/verbs": 200, "/v1/openapi.json": 200, "/v1/docs": 200, "/v1/docs/init.js": 200,
    "/v1/docs/static/{name}": 200, "/.well-known/oauth-protected-resource": 200,
    "/.well-known/oauth-protected-resource/mcp": 200, "/api/auth/signup": 201,
    "/api/auth/login": 200, "/api/auth/logout": 200,
    "/metrics": 401,  # only the metrics token opens it; no caller here has it
    "/feeds/{feed_token}": 200,  # the secret URL is the credential (CAPABILITY_URLS)
}  # fmt: skip
# Whoever holds such a URL reads what it shows, as a feed reader does: not a leak.
CAPABILITY_URLS = {"/feeds/{feed_token}"}
# The OAuth server's endpoints answer by method, whoever calls (none of them reads a cookie).
PUBLIC_METHODS: dict[tuple[str, str], int] = {
    ("GET", "/.well-known/oauth-authorization-server"): 200,
    ("HEAD", "/.well-known/oauth-authorization-server"): 200,
    ("OPTIONS", "/.well-known/oauth-authorization-server"): 204,
    ("GET", "/authorize"): 200, ("HEAD", "/authorize"): 200,  # the consent page's shell
    ("POST", "/token"): 400, ("OPTIONS", "/token"): 204,  # no grant_type
    ("POST", "/revoke"): 401, ("OPTIONS", "/revoke"): 204,  # no client
    ("POST", "/register"): 201, ("OPTIONS", "/register"): 204,
}  # fmt: skip
# The consent page's API: an empty authorization request is refused (400) to a signed-in
# person, whoever they are; without a session it is 401.
CONSENT = {"own": 400, "other workspace": 400, "other key": 401, "no auth": 401,
           "revoked key": 401, "viewer": 400, "expired session": 401}  # fmt: skip
MCP_DOOR = {"own": 200, "other workspace": 200, "other key": 200, "no auth": 401,
            "revoked key": 401, "viewer": 401, "expired session": 401}  # fmt: skip
# Signing out everywhere ends the caller's own sessions: any live session may, nothing else.
SESSION_DOOR = {"own": 200, "other workspace": 200, "other key": 401, "no auth": 401,
                "revoked key": 401, "viewer": 200, "expired session": 401}  # fmt: skip
OWNERS_ONLY_READS = {("GET", "/api/workspaces/{ws}/invites"),
                     ("HEAD", "/api/workspaces/{ws}/invites")}  # fmt: skip
OWN_STATUS: dict[tuple[str, str], int] = {
    ("POST", "/api/workspaces/{ws}/keys"): 201,
    ("POST", "/api/workspaces/{ws}/mcp-connectors"): 201,
    ("POST", "/api/workspaces/{ws}/notification-targets"): 201,
    ("POST", "/api/workspaces/{ws}/feeds"): 201,
    ("POST", "/api/workspaces/{ws}/watches/import"): 201,
    ("POST", "/api/workspaces/{ws}/invites"): 201,
    ("POST", "/api/chats"): 201,
    ("POST", "/api/automations/watches"): 201,
    ("POST", "/api/automations/{automation_id}/run"): 202,
    ("DELETE", "/api/automations/{automation_id}"): 204,
    ("GET", "/api/chats/{chat_id}/stream"): 204,  # no turn in flight
    ("HEAD", "/api/chats/{chat_id}/stream"): 204,
}
STREAMS = {"/api/chats/{chat_id}/events", "/api/chats/{chat_id}/messages"}
# Run last, in this order (own last of all): they delete what the other routes use. Signing in
# or up ends the session the caller's cookie named (a new session id at every sign-in).
DESTRUCTIVE = [("DELETE", "/api/automations/{automation_id}"), ("DELETE", "/v1/jobs/{job_id}"),
               ("DELETE", "/api/workspaces/{ws}/mcp-connectors/{connector_id}"),
               ("DELETE", "/api/workspaces/{ws}/notification-targets/{target_id}"),
               ("DELETE", "/api/workspaces/{ws}/feeds/{feed_id}"),
               ("DELETE", "/api/workspaces/{ws}/keys/{key_id}"), ("DELETE", "/api/chats/{chat_id}"),
               ("DELETE", "/api/workspaces/{ws}/invites/{invite_id}"),
               ("POST", "/api/auth/logout-everywhere"), ("POST", "/api/auth/signup"),
               ("POST", "/api/auth/login"), ("POST", "/api/auth/logout")]  # fmt: skip


@dataclasses.dataclass
class World:
    """Workspace A's objects and everyone's credentials."""

    base: str
    a: Tenant
    b: Tenant
    params: dict[str, str]
    own_ids: set[str]  # every id of A's that must not reach another caller
    markers: set[str]  # A's contents (titles, texts, email) likewise
    columns: dict[str, tuple[dict[str, str], dict[str, str]]]  # column -> (headers, cookies)
    bodies: dict[tuple[str, str], Callable[[], Any]]


def _bodies(w: dict[str, Any]) -> dict[tuple[str, str], Callable[[], Any]]:
    """A valid body for every write (a callable: some must differ on each call)."""
    fresh = lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"  # noqa: E731
    return {
        ("POST", "/api/auth/signup"): lambda: {"email": fresh("new") + "@example.com",
                                               "password": PASSWORD},
        ("POST", "/api/auth/login"): lambda: {"email": w["login_email"], "password": PASSWORD},
        ("POST", "/api/auth/logout"): lambda: {},
        ("POST", "/api/auth/logout-everywhere"): lambda: {},
        ("POST", "/api/workspaces/{ws}/invites"): lambda: {"email": fresh("inv") + "@example.com"},
        ("POST", "/api/workspaces/{ws}/keys"): lambda: {"name": fresh("key")},
        ("PATCH", "/api/workspaces/{ws}/mcp-connectors/{connector_id}"): lambda: {"chat_use": True},
        ("POST", "/v1/web/scrape"): lambda: {"url": w["page"]},
        ("POST", "/v1/web/discover"): lambda: {"url": w["page"], "limit": 5},
        ("POST", "/v1/maps/search"): lambda: {"query": "cafe", "near": "Berlin"},
        ("POST", "/v1/maps/reviews"): lambda: {"place_ref": w["place_ref"]},
        ("*", "/mcp"): lambda: {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        ("POST", "/api/workspaces/{ws}/mcp-connectors"): lambda: {"name": fresh("c"),
                                                                  "url": w["mcp_url"]},
        ("POST", "/api/workspaces/{ws}/mcp-connectors/{connector_id}/test"): lambda: {},
        ("POST", "/api/workspaces/{ws}/notification-targets"): lambda: {"name": fresh("t"),
                                                                        "url": w["hook"]},
        ("POST", "/api/workspaces/{ws}/notification-targets/{target_id}/test"): lambda: {},
        ("PATCH", "/api/workspaces/{ws}/notification-targets/{target_id}"): lambda: {
            "default": True},
        ("POST", "/api/workspaces/{ws}/feeds"): lambda: {},
        ("POST", "/api/workspaces/{ws}/watches/import"): lambda: {"source": "lookout", "file": {
            "format": "lookout.watches", "version": 1,
            "watches": [{"message": f"what is on {w['page']}", "cadence": "0 9 * * *"}]}},
        ("POST", "/api/chats"): lambda: {"title": "matrix"},
        ("PATCH", "/api/chats/{chat_id}"): lambda: {"title": TITLE},
        ("POST", "/api/chats/{chat_id}/messages"): lambda: {"text": "hello"},
        ("POST", "/api/automations/watches"): lambda: {
            "chat_id": w["chat2"], "cadence": "0 9 * * *", "message": f"what is on {w['page']}"},
        ("POST", "/api/automations/{automation_id}/run"): lambda: {},
        ("PATCH", "/api/automations/{automation_id}"): lambda: {"notify": {"enabled": False}},
        ("POST", "/api/watches/bulk"): lambda: {"action": "resume", "ids": [w["automation_id"]]},
        ("PATCH", "/api/workspaces/{ws}/watch-settings"): lambda: {"history_retention_days": 90},
        ("POST", "/token"): lambda: {},
        ("POST", "/revoke"): lambda: {},
        ("POST", "/register"): lambda: {"redirect_uris": ["https://agent.example/cb"]},
        ("POST", "/api/oauth/authorize"): lambda: {"query": "response_type=code",
                                                   "allow": False},
    }  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Cell:
    method: str
    path: str  # the route's template
    column: str
    expected: int
    status: int
    leaks: tuple[str, ...]

    @property
    def held(self) -> bool:
        return self.status == self.expected and not self.leaks


def matrix_routes(routes: Any) -> list[tuple[str, str]]:
    """(method, template) of every route, destructive ones last in DESTRUCTIVE's order."""
    found = {(route.method, route.resource.canonical) for route in routes}
    ordered = sorted(found - set(DESTRUCTIVE)) + [r for r in DESTRUCTIVE if r in found]
    return ordered


def expected(world: World, method: str, template: str, column: str, sent: str) -> int:
    if template in PUBLIC:
        return PUBLIC[template]
    if (method, template) in PUBLIC_METHODS:
        return PUBLIC_METHODS[(method, template)]
    if template == "/api/oauth/authorize":
        return CONSENT[column]
    if template == "/mcp":
        return MCP_DOOR[column]
    if template == "/api/auth/logout-everywhere":
        return SESSION_DOOR[column]
    own = OWN_STATUS.get((method, template), 200)
    if column == "own":
        return own
    if column == "other workspace":
        return 404
    if column == "other key":
        return 404 if any(ident in sent for ident in world.own_ids) else own
    if column == "viewer":
        return own if method in READS and (method, template) not in OWNERS_ONLY_READS else 403
    return 401


def fill(template: str, params: dict[str, str]) -> str:
    path = template
    for name, value in params.items():
        path = path.replace("{" + name + "}", value)
    assert "{" not in path, f"no value for a parameter of {template}: add it to World.params"
    return path


async def call(
    client: Any, world: World, method: str, template: str, column: str
) -> tuple[int, str, str]:
    """(status, body — empty for a live stream —, what was sent: path and body)."""
    headers, cookies = world.columns[column]
    if template == "/mcp":
        headers = _mcp_credentials(world, column)
        headers = {**headers, "Content-Type": "application/json", "Accept": "application/json"}
    path = fill(template, world.params)
    maker = world.bodies.get((method, template))
    if method in ("POST", "PATCH", "PUT", "*") and maker is None:
        raise AssertionError(f"no body for {method} {template}: add one to BODIES")
    body = maker() if maker else None
    verb = "POST" if method == "*" else method
    data = json.dumps(body).encode() if body is not None else None
    sent = path + (data.decode() if data else "")
    kwargs = {"data": data, "headers": {**headers, "Content-Type": "application/json"}}
    client.session.cookie_jar.clear()  # only the column's credentials: no cookie from a login
    async with client.request(verb, path, cookies=cookies, **kwargs) as response:
        if template in STREAMS and response.headers.get("Content-Type", "").startswith(
            "text/event-stream"
        ):
            if template.endswith("/messages"):
                await response.read()  # a turn: read it to its end
            return response.status, "", sent
        # A binary answer (a job's PNG) is searched for leaks as text all the same.
        return response.status, await response.text(errors="replace"), sent


def _mcp_credentials(world: World, column: str) -> dict[str, str]:
    headers, _ = world.columns[column]
    if column == "own":
        return world.a.headers
    if column in ("other workspace", "other key"):
        return {**world.b.headers, auth.WORKSPACE_HEADER: str(world.a.workspace.id)}
    return {k: v for k, v in headers.items() if k == "Authorization"}


def leaks_in(world: World, column: str, body: str, sent: str) -> tuple[str, ...]:
    """A's ids and contents in an answer to someone outside A (what they sent excepted)."""
    if column in ("own", "viewer"):
        return ()
    return tuple(m for m in world.own_ids | world.markers if m in body and m not in sent)


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_every_route_answers_every_caller_as_documented_and_leaks_nothing(
    aiohttp_client: Any,
    aiohttp_server: Any,
    settings: Settings,
    db: asyncpg.Pool,
    tenant_factory: TenantFactory,
    site: Site,
    leak_watch: LeakWatch,
) -> None:
    # Given workspace A with one of everything, workspace B, and every kind of caller
    client, world = await _world(aiohttp_client, aiohttp_server, settings, db, tenant_factory,
                                 site, leak_watch)  # fmt: skip

    # When every route is called by every caller
    cells = []
    for method, template in matrix_routes(client.server.app.router.routes()):
        order = COLUMNS if (method, template) not in DESTRUCTIVE else (*COLUMNS[1:], "own")
        for column in order:
            status, body, sent = await call(client, world, method, template, column)
            leak_watch.body(f"{method} {template} as {column}", body)
            want = expected(world, method, template, column, sent)
            leaks = () if template in CAPABILITY_URLS else leaks_in(world, column, body, sent)
            cells.append(Cell(method, template, column, want, status, leaks))

    # Then each answered its documented status, and no answer outside A showed A's things
    figures = _figures(cells)
    hostile_fixtures.write_figures("hostile-isolation", figures)
    wrong = [f"{c.method} {c.path} as {c.column}: {c.status}, expected {c.expected}"
             + (f", leaked {c.leaks}" if c.leaks else "") for c in cells if not c.held]  # fmt: skip
    assert wrong == [], "\n".join(wrong)
    assert figures["routes"] >= 50, figures["routes"]
    leak_watch.verify()


def _figures(cells: list[Cell]) -> dict[str, Any]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in cells:
        row = rows.setdefault((cell.method, cell.path), {"route": f"{cell.method} {cell.path}"})
        mark = "" if cell.held else " ✗"
        row[cell.column] = f"{cell.status}{mark}"
    return {
        "title": "Tenant isolation matrix",
        "what": "Every route of the router x {own workspace, other workspace (B signed in, "
        "asking for A), other key (B's API key with A's ids), no auth, revoked key, viewer, "
        "expired session}; held = the documented status and none of A's ids or contents in "
        "an answer to a caller outside A.",
        "tried": len(cells),
        "held": sum(cell.held for cell in cells),
        "routes": len(rows),
        "leaks": sum(len(cell.leaks) for cell in cells),
        "rows": list(rows.values()),
    }


async def _world(
    aiohttp_client: Any,
    aiohttp_server: Any,
    settings: Settings,
    db: asyncpg.Pool,
    tenant_factory: TenantFactory,
    site: Site,
    watch: LeakWatch,
) -> tuple[Any, World]:
    fakes = [providers.FakeNominatim(), providers.FakePlaces(), providers.FakeSearxng()]
    for fake in fakes:
        await providers.serve(fake, aiohttp_server)
    osm, places, searxng = fakes
    configured = settings.replace(
        notify_allow_private=True, job_wait_s=0.2, maps_cache_ttl_s=0, metrics_token=METRICS_TOKEN,
        nominatim_url=osm.url, google_places_url=places.url,
        google_places_key=providers.GOOGLE_KEY, search_url=searxng.url,
    )  # fmt: skip
    client = await aiohttp_client(app.create_app(configured))
    base = str(client.make_url("")).rstrip("/")
    a, b = await tenant_factory(credits=10_000), await tenant_factory(credits=10_000)
    a_session = await auth.new_session(db, configured, a.user.id)
    b_session = await auth.new_session(db, configured, b.user.id)
    origin = {"Origin": factories.page_origin(client)}
    as_a = {"headers": origin, "cookies": {auth.COOKIE: a_session}}
    w: dict[str, Any] = {
        "page": site.url("/page"),
        "hook": site.url("/hook"),
        "mcp_url": f"{base}/mcp",
        "place_ref": "google:" + places.places[0]["id"],
    }
    objects = await _objects(client, db, a, as_a, w)
    revoked = await accounts.create_key(db, workspace_id=a.workspace.id, name="revoked")
    await repo.revoke_api_key(db, key_id=revoked.key.id, workspace_id=a.workspace.id)
    expired = secrets.token_urlsafe(32)
    await repo.insert_session(
        db, token_hash=auth.session_digest(expired), user_id=a.user.id,
        expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1),
    )  # fmt: skip
    viewer = await member_cookie(db, configured, a, role="viewer")
    login = await accounts.create_user(db, email=f"login-{uuid.uuid4().hex[:8]}@example.com",
                                       password=PASSWORD)  # fmt: skip
    w["login_email"] = login.email
    keys = {"A's key": a.key, "B's key": b.key, "revoked key": revoked.text,
            "spare key": objects["spare_key"], "signing secret": objects["signing"],
            "invite token": objects["invite"]}  # fmt: skip
    for label, value in keys.items():
        watch.key(label, value)
    sessions = {"A's session": a_session, "B's session": b_session, "expired": expired,
                "viewer's session": viewer[auth.COOKIE]}  # fmt: skip
    for label, value in sessions.items():
        watch.secret(label, value)
    watch.secret("LOOKOUT_SECRET_KEY", configured.secret_key)
    columns = {
        "own": (origin, {auth.COOKIE: a_session}),
        "other workspace": ({**origin, auth.WORKSPACE_HEADER: str(a.workspace.id)},
                            {auth.COOKIE: b_session}),
        "other key": (b.headers, {}),
        "no auth": (origin, {}),
        "revoked key": ({"Authorization": f"Bearer {revoked.text}"}, {}),
        "viewer": (origin, viewer),
        "expired session": (origin, {auth.COOKIE: expired}),
    }  # fmt: skip
    version = page.Site.load().version
    params = {"ws": str(a.workspace.id), "version": version, "path": "app.css",
              "name": "swagger-ui.css", **objects["params"]}  # fmt: skip
    w["automation_id"] = objects["params"]["automation_id"]  # bodies naming A's watch
    own_ids = {str(a.workspace.id), w["chat2"], *objects["params"].values()}
    markers = {TITLE, TEXT, a.user.email}
    world = World(base, a, b, params, own_ids, markers, columns, _bodies(w))
    return client, world


async def _objects(
    client: Any, db: asyncpg.Pool, a: Tenant, as_a: dict[str, Any], w: dict[str, Any]
) -> dict[str, Any]:
    """One of everything in A, made through the API as A's owner."""

    async def post(path: str, body: Any, status: int = 201) -> Any:
        response = await client.post(path, json=body, **as_a)
        assert response.status == status, await response.text()
        return (await response.json())["data"]

    ws = f"/api/workspaces/{a.workspace.id}"
    chat = (await post("/api/chats", {"title": TITLE}))["id"]
    w["chat2"] = (await post("/api/chats", {"title": TITLE}))["id"]
    turn = await sse.stream(
        str(client.make_url("")).rstrip("/"), "POST", f"/api/chats/{chat}/messages",
        headers=as_a["headers"] | {"Cookie": f"{auth.COOKIE}={as_a['cookies'][auth.COOKIE]}"},
        json_body={"text": f"hello {TEXT}"},
    )  # fmt: skip
    assert turn.status == 200 and "finish" in turn.types, turn
    new_watch = {"chat_id": chat, "cadence": "0 9 * * *", "message": f"what is on {w['page']}"}
    watch = await post("/api/automations/watches", new_watch)
    job = await client.post(
        "/v1/web/scrape", json={"urls": [w["page"]] * 3, "async": True}, headers=a.headers
    )
    assert job.status == 202, await job.text()
    spare = await post(f"{ws}/keys", {"name": "spare"})
    headers = {"Authorization": f"Bearer {a.key}"}  # a secret the connector keeps
    connector = await post(
        f"{ws}/mcp-connectors", {"name": "self", "url": w["mcp_url"], "headers": headers}
    )
    target = await post(f"{ws}/notification-targets", {"name": "hook", "url": w["hook"]})
    invite = await post(f"{ws}/invites", {"email": "invitee@example.com"})
    feed = await post(f"{ws}/feeds", {})
    watch_feed = await post(f"{ws}/feeds", {"watch_id": watch["id"]})
    params = {
        "grant_id": await _connected_agent(db, a),
        "chat_id": chat,
        "automation_id": watch["id"],
        "job_id": (await job.json())["meta"]["job_id"],
        "artifact_id": await _artifact(db, (await job.json())["meta"]["job_id"]),
        "key_id": spare["id"],
        "connector_id": connector["connector"]["id"],
        "target_id": target["target"]["id"],
        "invite_id": invite["invite"]["id"],
        "feed_id": feed["feed"]["id"],
        "feed_token": watch_feed["url"].rsplit("/", 1)[1],
        "run_id": await _past_run(db, a, watch["id"]),
    }
    return {"params": params, "spare_key": spare["key"], "signing": target["signing_secret"],
            "invite": invite["token"]}  # fmt: skip


async def _artifact(db: asyncpg.Pool, job_id: str) -> str:
    """A file of A's job (a screenshot), as the worker keeps it."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    saved = await repo.insert_job_artifact(
        db, job_id=uuid.UUID(job_id), content_type="image/png", body=png
    )
    assert saved is not None
    return str(saved.id)


async def _past_run(db: asyncpg.Pool, a: Tenant, automation_id: str) -> str:
    """A finished-looking run of A's watch (a run by id is one of the watch's objects)."""
    run_id = await repo.insert_run(
        db, automation_id=uuid.UUID(automation_id), workspace_id=a.workspace.id,
        scheduled_for=dt.datetime.now(dt.UTC) - dt.timedelta(days=1), manual=True,
    )  # fmt: skip
    assert run_id is not None
    return str(run_id)


async def _connected_agent(db: asyncpg.Pool, a: Tenant) -> str:
    """An agent A's owner connected over OAuth (what the consent step leaves behind)."""
    client_id = f"agent-{uuid.uuid4().hex[:8]}"
    await db.execute(
        "INSERT INTO oauth_clients (client_id, metadata, kind) VALUES ($1, $2, 'registered')",
        client_id,
        {"client_name": "Agent", "redirect_uris": ["https://agent.example/cb"]},
    )
    grant_id = await db.fetchval(
        "INSERT INTO oauth_grants (client_id, workspace_id, user_id, scope, resource)"
        " VALUES ($1, $2, $3, 'verbs:read', 'http://x/mcp') RETURNING id",
        client_id, a.workspace.id, a.user.id,
    )  # fmt: skip
    return str(grant_id)
