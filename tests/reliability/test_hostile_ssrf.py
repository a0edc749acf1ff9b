"""SSRF through every outbound path of the running service, against the blocked-destination set
of tests/integration/test_fetch_ssrf.py: web.scrape; web.discover (start URL, robots.txt sitemap,
sitemap index, an on-site link that redirects); MCP connector URLs (at creation, and when the
name re-resolves before use); notification targets (webhook and Apprise URLs, at creation and
re-resolved before a send); provider URLs (a provider that redirects elsewhere).

Private networks are off, as in production. A "secret" server on 127.0.0.1 stands for what must
never be reached; a stand-in public site runs on 127.0.0.2 (the guard is told to treat that one
address as public). The network sandbox answers DNS from a table and refuses non-loopback
sockets, so nothing leaves this machine even if the guard regressed. Held = no request reached
the secret server or left loopback, and the service said why (blocked or invalid), per try.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import html
import ipaddress
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from lookout import app
from lookout.access import auth
from lookout.capabilities import guard
from lookout.settings import Settings
from tests.integration import factories, webpages
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.integration.test_fetch_ssrf import BLOCKED, NAMES
from tests.reliability import hostile_fixtures
from tests.reliability.hostile_fixtures import LeakWatch, Sandbox, leak_watch, sandbox

__all__ = ["leak_watch", "sandbox", "tenant_factory"]

PUBLIC_STAND_IN = "127.0.0.2"
GUARD_WORDS = ("Refused to fetch", "Lookout does not notify", "blocked_destination")
REBIND_TO = ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "169.254.169.254"]
Sender = Callable[[], Awaitable[tuple[int, str]]]


@dataclasses.dataclass
class Lab:
    client: TestClient[Any, Any]
    tenant: Tenant
    session: dict[str, str]  # the owner's cookie
    origin: dict[str, str]
    secret: webpages.Site
    secret_server: TestServer
    public_port: int
    sandbox: Sandbox
    watch: LeakWatch
    outcomes: dict[str, collections.Counter[str]] = dataclasses.field(default_factory=dict)
    reached: list[str] = dataclasses.field(default_factory=list)

    def blocked(self, template: str) -> str:
        return template.format(port=self.secret_server.port, public_port=self.public_port)

    async def attempt(
        self, path: str, target: str, send: Sender, use: Callable[[str], Sender] | None = None
    ) -> str:
        """Run one try; record how it ended: refused by the guard, refused as invalid input,
        not fetched, stored for a public host and not followed when used, or REACHED (a
        failure). `use(answer)` sends a request that uses what `send` stored."""
        hits, escaped = len(self.secret.hits), len(self.sandbox.refused)
        logged = len(self.watch.capture.text.getvalue())
        status, text = await send()
        self.watch.body(path, text)
        stored = status == 201 and use is not None
        if stored:
            assert use is not None
            status, text = await use(text)()
            self.watch.body(path, text)
        new_logs = self.watch.capture.text.getvalue()[logged:]
        if len(self.secret.hits) > hits or len(self.sandbox.refused) > escaped:
            outcome = "REACHED"
            self.reached.append(f"{path}: {target}")
        elif any(word in text or word in new_logs for word in GUARD_WORDS):
            outcome = "refused by the guard" + (" when used" if stored else "")
        elif status == 400 and "invalid_input" in text:
            outcome = "refused as invalid input"
        elif stored and (status < 500 or "not followed" in text):
            outcome = "public host stored; its redirect not followed when used"
        elif urlsplit(target).scheme not in ("http", "https") and status < 500:
            outcome = "not fetched (not http)"
        else:
            outcome = f"other (HTTP {status})"
        self.outcomes.setdefault(path, collections.Counter())[outcome] += 1
        return outcome

    def use_once(self, route: str, item_id: str) -> Sender:
        """Test the stored item (a connection or a send), then delete it."""

        async def test_then_delete() -> tuple[int, str]:
            answer = await self.post(f"{route}/{item_id}/test", {})
            deleted = await self.client.delete(
                f"{route}/{item_id}", headers=self.origin, cookies=self.session
            )
            assert deleted.status == 200, await deleted.text()
            return answer

        return test_then_delete

    async def post(self, path: str, body: dict[str, Any], *, key: bool = False) -> tuple[int, str]:
        auth_headers = self.tenant.headers if key else self.origin
        cookies = None if key else self.session
        response = await self.client.post(path, json=body, headers=auth_headers, cookies=cookies)
        return response.status, await response.text()


def stand_in(blocked: list[str]) -> web.Application:
    """The public-looking site: r<i>.public.example lists blocked[i] as its sitemap in
    robots.txt, x<i> as a child of its sitemap index, l<i> links to /go, which redirects there."""

    async def serve(request: web.Request) -> web.StreamResponse:
        label = request.host.split(".", 1)[0]
        kind, index = label[:1], label[1:]
        if request.path == "/to":
            raise web.HTTPFound(request.query["next"])
        if request.path == "/hello":
            return web.Response(text="<p>public page</p>", content_type="text/html")
        if not index.isdigit() or int(index) >= len(blocked):
            raise web.HTTPNotFound()
        target = blocked[int(index)]
        if (kind, request.path) == ("r", "/robots.txt"):
            return web.Response(text=f"User-agent: *\nAllow: /\nSitemap: {target}\n")
        if (kind, request.path) == ("x", "/sitemap.xml"):
            loc = html.escape(target)
            xml = ('<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns='
                   f'"http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{loc}</loc>'
                   "</sitemap></sitemapindex>")  # fmt: skip
            return web.Response(text=xml, content_type="application/xml")
        if kind in "rx" and request.path == "/":
            return web.Response(text="<p>a page</p>", content_type="text/html")
        if (kind, request.path) == ("l", "/"):
            page = "<html><body><main><a href='/go'>go</a></main></body></html>"
            return web.Response(text=page, content_type="text/html")
        if (kind, request.path) == ("l", "/go"):
            raise web.HTTPFound(target)
        raise web.HTTPNotFound()

    site = web.Application()
    site.router.add_route("*", "/{tail:.*}", serve)
    return site


def redirecting_provider(blocked: list[str], path: str) -> web.Application:
    """A provider whose every answer redirects to the next blocked destination."""
    targets = itertools.cycle(blocked)

    async def search(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(next(targets))

    provider = web.Application()
    provider.router.add_get(path, search)
    return provider


@pytest.fixture
def treat_stand_in_as_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every policy the service builds treats 127.0.0.2 (and only it) as a public address."""
    original = guard.Policy.from_settings

    def from_settings(cls: type[guard.Policy], settings: Settings, **kwargs: Any) -> guard.Policy:
        stand_in = frozenset({ipaddress.ip_address(PUBLIC_STAND_IN)})
        return dataclasses.replace(original(settings, **kwargs), treat_as_public=stand_in)

    monkeypatch.setattr(guard.Policy, "from_settings", classmethod(from_settings))


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.usefixtures("treat_stand_in_as_public")
async def test_every_outbound_path_refuses_every_blocked_destination(
    aiohttp_client: Any,
    aiohttp_server: Any,
    settings: Settings,
    db: asyncpg.Pool,
    tenant_factory: TenantFactory,
    sandbox: Sandbox,
    leak_watch: LeakWatch,
) -> None:
    # Given the secret server, the stand-in public site, two redirecting providers, and DNS
    secret = webpages.Site()
    secret.add("/", "<p>internal admin</p>")
    secret_server = await aiohttp_server(secret.app())
    await _ipv6_twin(aiohttp_server, secret, secret_server.port)
    blocked: list[str] = []  # filled once the stand-in's port is known
    public = await aiohttp_server(stand_in(blocked), host=PUBLIC_STAND_IN)
    blocked += [t.format(port=secret_server.port, public_port=public.port) for t in BLOCKED]
    osm = await aiohttp_server(redirecting_provider(blocked, "/search"))
    searxng = await aiohttp_server(redirecting_provider(blocked, "/search"))
    sandbox.names.update(NAMES)
    sandbox.names["*.public.example"] = [PUBLIC_STAND_IN]
    sandbox.names["flip.test"] = [PUBLIC_STAND_IN]
    lab = await _lab(aiohttp_client, settings, db, tenant_factory, sandbox, leak_watch, secret,
                     secret_server, public.port, osm, searxng)  # fmt: skip

    # When every path is aimed at every blocked destination
    await _control(lab)
    for index, target in enumerate(blocked):
        await _through_verbs(lab, index, target)
        await _through_configuration(lab, index, target)
    await _rebinding(lab)

    # Then none reached the secret server or left loopback, and each was refused
    figures = _figures(lab, len(blocked))
    hostile_fixtures.write_figures("hostile-ssrf", figures)
    assert lab.reached == [], lab.reached
    assert secret.hits == [] and sandbox.refused == []
    others = {path: dict(c) for path, c in lab.outcomes.items()
              if any(o.startswith("other") for o in c)}  # fmt: skip
    assert others == {}, others
    assert await _stored(lab) == (0, 0), "a blocked connector or target was stored"
    leak_watch.verify()


async def _ipv6_twin(aiohttp_server: Any, secret: webpages.Site, port: int) -> None:
    """The secret server on [::1] too, so a connection to an IPv6 loopback spelling would be
    seen arrive rather than fail to connect (where the machine has IPv6)."""
    with contextlib.suppress(OSError):
        await aiohttp_server(secret.app(), host="::1", port=port)


async def _lab(
    aiohttp_client: Any,
    settings: Settings,
    db: asyncpg.Pool,
    tenant_factory: TenantFactory,
    sandbox: Sandbox,
    watch: LeakWatch,
    secret: webpages.Site,
    secret_server: TestServer,
    public_port: int,
    osm: TestServer,
    searxng: TestServer,
) -> Lab:
    strict = settings.replace(
        allow_private_networks=False, notify_allow_private=False, fetch_timeout_s=2.0,
        fetch_connect_timeout_s=1.0, job_wait_s=5.0, maps_cache_ttl_s=0,
        nominatim_url=f"http://127.0.0.1:{osm.port}", search_url=f"http://127.0.0.1:{searxng.port}",
    )  # fmt: skip
    client = await aiohttp_client(app.create_app(strict))
    tenant = await tenant_factory(credits=1_000_000, rate_limit=1_000_000)
    watch.key("the API key", tenant.key)
    watch.secret("LOOKOUT_SECRET_KEY", strict.secret_key)
    token = await auth.new_session(db, strict, tenant.user.id)
    watch.secret("the session token", token)
    origin = {"Origin": factories.page_origin(client)}
    return Lab(client, tenant, {auth.COOKIE: token}, origin, secret, secret_server, public_port,
               sandbox, watch)  # fmt: skip


async def _control(lab: Lab) -> None:
    """Without it the redirect and sitemap tries could pass by failing to connect at all."""
    url = f"http://public.example:{lab.public_port}/hello"
    status, text = await lab.post("/v1/web/scrape", {"url": url}, key=True)
    assert status == 200 and "public page" in text, text


async def _through_verbs(lab: Lab, index: int, target: str) -> None:
    base = f"public.example:{lab.public_port}/"
    tries: list[tuple[str, str, dict[str, Any]]] = [
        ("web.scrape", "/v1/web/scrape", {"url": target}),
        ("web.discover: start URL", "/v1/web/discover", {"url": target}),
        ("web.discover: robots.txt sitemap", "/v1/web/discover", {"url": f"http://r{index}.{base}"}),
        ("web.discover: sitemap index child", "/v1/web/discover", {"url": f"http://x{index}.{base}"}),
        ("web.discover: on-site link redirecting", "/v1/web/discover",
         {"url": f"http://l{index}.{base}"}),
        ("provider: Nominatim redirecting (maps.search)", "/v1/maps/search", {"query": "cafe"}),
        ("provider: SearXNG redirecting (web.discover query)", "/v1/web/discover", {"query": "x"}),
    ]  # fmt: skip
    for path, route, body in tries:
        await lab.attempt(path, target, lambda r=route, b=body: lab.post(r, b, key=True))


async def _through_configuration(lab: Lab, index: int, target: str) -> None:
    ws = lab.tenant.workspace.id
    connectors = f"/api/workspaces/{ws}/mcp-connectors"
    targets = f"/api/workspaces/{ws}/notification-targets"
    routes = {resource.canonical for resource in lab.client.server.app.router.resources()}
    tries = [("MCP connector URL", connectors, {"name": f"c{index}", "url": target})]
    if "/api/workspaces/{ws}/notification-targets" in routes:
        tries.append(
            ("notification target: webhook", targets, {"name": f"t{index}", "url": target})
        )
        netloc = urlsplit(target).netloc
        if urlsplit(target).scheme == "http" and netloc:
            json_url = f"json://{netloc}/hook"
            tries.append(("notification target: Apprise json://", targets,
                          {"name": f"j{index}", "url": json_url}))  # fmt: skip
    for path, route, body in tries:
        kind = "connector" if route == connectors else "target"

        def use(answer: str, route: str = route, kind: str = kind) -> Sender:
            return lab.use_once(route, _id(answer, kind))

        await lab.attempt(path, target, lambda r=route, b=body: lab.post(r, b), use)


async def _rebinding(lab: Lab) -> None:
    """Created while flip.test was public; the name then re-resolves inwards before each use."""
    ws = lab.tenant.workspace.id
    port = lab.secret_server.port
    connectors = f"/api/workspaces/{ws}/mcp-connectors"
    targets = f"/api/workspaces/{ws}/notification-targets"
    status, text = await lab.post(connectors, {"name": "flip", "url": f"http://flip.test:{port}/"})
    assert status == 201, text
    connector = _id(text, "connector")
    hook = {"name": "flip", "url": f"http://flip.test:{port}/hook"}
    status, text = await lab.post(targets, hook)
    assert status == 201, text
    target = _id(text, "target")
    for address in REBIND_TO:
        lab.sandbox.names["flip.test"] = [address]
        await lab.attempt(
            "MCP connector: name re-resolved before use",
            address,
            lambda: lab.post(f"{connectors}/{connector}/test", {}),
        )
        await lab.attempt(
            "notification target: name re-resolved before a send",
            address,
            lambda: lab.post(f"{targets}/{target}/test", {}),
        )


def _id(text: str, kind: str) -> str:
    return str(json.loads(text)["data"][kind]["id"])


async def _stored(lab: Lab) -> tuple[int, int]:
    """Connectors and targets stored besides the two rebinding ones."""
    ws = lab.tenant.workspace.id
    found = []
    for route, key in (("mcp-connectors", "connectors"), ("notification-targets", "targets")):
        response = await lab.client.get(
            f"/api/workspaces/{ws}/{route}", headers=lab.origin, cookies=lab.session
        )
        items = (await response.json())["data"][key] if response.status == 200 else []
        found.append(len([item for item in items if item["name"] != "flip"]))
    return found[0], found[1]


def _figures(lab: Lab, destinations: int) -> dict[str, Any]:
    rows = []
    for path, counts in lab.outcomes.items():
        tried = sum(counts.values())
        failed = counts["REACHED"] + sum(n for o, n in counts.items() if o.startswith("other"))
        rows.append({
            "path": path, "tried": tried, "refused": tried - failed,
            "by the guard": counts["refused by the guard"]
                + counts["refused by the guard when used"],
            "as invalid input": counts["refused as invalid input"],
            "not fetched (not http)": counts["not fetched (not http)"],
            "public host, redirect not followed":
                counts["public host stored; its redirect not followed when used"],
            "reached": counts["REACHED"],
        })  # fmt: skip
    tried = sum(row["tried"] for row in rows)
    return {
        "title": "SSRF through every outbound path",
        "what": f"The {destinations} blocked destinations of tests/integration/test_fetch_ssrf.py "
        "(loopback, private, link-local, metadata, multicast, reserved addresses in every "
        "spelling; names resolving to them, DNS rebinding, redirects inwards, non-http schemes) "
        "aimed at every outbound path through the running service, private networks off. "
        "Refused = no request reached the secret server or left loopback, and the answer or "
        "the log said why.",
        "tried": tried,
        "held": sum(row["refused"] for row in rows),
        "reached": len(lab.reached),
        "secret_server_hits": len(lab.secret.hits),
        "sandbox_refused_connections": len(lab.sandbox.refused),
        "rows": rows,
    }
