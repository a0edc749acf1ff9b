"""Schemathesis on EVERY route the web process serves, each request carrying one hostile value.

The OpenAPI document covers the REST door and the /api routes; the rest (the page and its
assets, health, metrics, MCP and its metadata, the docs) get an operation here, and the test
first checks that the union names every route of the app's router, so a new route cannot
escape. For each operation Schemathesis draws a request that fits its schema; hypothesis then
puts one hostile value into one place of it (a body field, the whole body, a query parameter,
a header, a path parameter): integers past Python's 4,300 digits, NaN / Infinity / 1e999,
nesting 200 to 60,000 deep, stream ids past Redis's 64-bit range, and unicode edge cases (lone
surrogates, NUL, noncharacters, bidi overrides, line separators, invalid UTF-8 bytes, 10,000
combining marks). The body is written by hand so that the number and the bytes reach the
server as they are.

Held: no 500 (501/502/503 are documented answers of verbs with no or a failing provider), no
logged traceback, a JSON refusal is the error envelope (or a JSON-RPC error on /mcp), and an
event stream never carries an `internal` error part.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import urllib.parse
from typing import Any

import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import strategies as st
from schemathesis import GenerationMode

from lookout import app
from lookout.settings import Settings
from tests.integration.factories import TenantFactory, tenant_factory
from tests.reliability import hostile_fixtures
from tests.reliability.hostile_fixtures import Sandbox, sandbox

__all__ = ["sandbox", "tenant_factory"]

EXAMPLES = 12  # per operation: ~60 operations
DOCUMENTED_5XX = {501, 502, 503}
METRICS_TOKEN = "metrics-token-for-the-fuzzer"
_ANY_OBJECT = {"type": "object", "additionalProperties": True}


def _op(summary: str, *, body: bool = False, params: tuple[str, ...] = ()) -> dict[str, Any]:
    operation: dict[str, Any] = {"summary": summary, "responses": {"default": {"description": "-"}}}
    if body:
        content = {"application/json": {"schema": _ANY_OBJECT}}
        operation["requestBody"] = {"required": True, "content": content}
    if params:
        operation["parameters"] = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in params
        ]
    return operation


# The routes /v1/openapi.json leaves out (it documents the API, not the page, probes or MCP).
UNDOCUMENTED: dict[str, dict[str, Any]] = {
    "/": {"get": _op("the page")},
    "/app/{version}/{path}": {"get": _op("an asset", params=("version", "path"))},
    "/healthz": {"get": _op("liveness")},
    "/readyz": {"get": _op("readiness")},
    "/metrics": {"get": _op("metrics")},
    "/mcp": {
        "post": _op("MCP", body=True),
        "get": _op("MCP (405)"),
        "delete": _op("MCP (405)"),
    },
    "/.well-known/oauth-protected-resource": {"get": _op("resource metadata")},
    "/.well-known/oauth-protected-resource/mcp": {"get": _op("resource metadata")},
    "/v1/openapi.json": {"get": _op("the document")},
    "/v1/docs": {"get": _op("the docs page")},
    "/v1/docs/init.js": {"get": _op("the docs script")},
    "/v1/docs/static/{name}": {"get": _op("a docs asset", params=("name",))},
    # The OAuth 2.1 authorization server (RFC 8414 / 6749 / 7591 / 7009): RFC errors, not the
    # envelope ({"error": "invalid_request", …}).
    "/.well-known/oauth-authorization-server": {
        "get": _op("server metadata"), "options": _op("CORS preflight"),
    },
    "/authorize": {"get": _op("the consent page")},
    "/token": {"post": _op("token", body=True), "options": _op("CORS preflight")},
    "/register": {"post": _op("registration", body=True), "options": _op("CORS preflight")},
    "/revoke": {"post": _op("revocation", body=True), "options": _op("CORS preflight")},
}  # fmt: skip
OAUTH = {"/token", "/register", "/revoke", "/.well-known/oauth-authorization-server", "/authorize"}


# -- hostile values ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Raw:
    """A JSON token written verbatim (what json.dumps cannot or will not write)."""

    token: bytes

    def text(self) -> str:
        return self.token.decode("latin-1")[:8000]


UNICODE_EDGES = [
    "\ud800", "x\udfffy", "\u0000", "a\u0000b", "\ufffe\uffff", "\U0010ffff", "\u202eevil\u202c",
    "\u2028\u2029", "\ufeff", "e" + "\u0301" * 10_000, "\U0001f469\u200d\U0001f469\u200d\U0001f467",
    "\ufdfa" * 1000, "\u0130\u0131\u00df", "\x1b[31m", "\r\nX-Injected: 1",
]  # fmt: skip
hostile_values = st.one_of(
    st.integers(min_value=4301, max_value=8000).map(lambda n: Raw(b"9" * n)),
    st.integers(min_value=4301, max_value=8000).map(lambda n: Raw(b"-1" + b"0" * n)),
    st.sampled_from(
        [Raw(b"NaN"), Raw(b"Infinity"), Raw(b"-Infinity"), Raw(b"1e999"), Raw(b"-2.5e400")]
    ),
    st.integers(min_value=200, max_value=60_000).map(lambda d: Raw(b"[" * d + b"]" * d)),
    st.integers(min_value=200, max_value=20_000).map(lambda d: Raw(b'{"a":' * d + b"1" + b"}" * d)),
    st.sampled_from([Raw(b'"\xc0\xaf"'), Raw(b'"\xed\xa0\x80"'), Raw(b'"\xff\xfe"')]),
    st.sampled_from(UNICODE_EDGES),
    st.builds("{}-{}".format, st.integers(min_value=2**64, max_value=10**30), st.integers(0, 9)),
    st.sampled_from(
        [
            "99999999999999999999-1",
            "\u0661-\u0661",
            "18446744073709551615-18446744073709551615",
            "1-18446744073709551616",
        ]
    ),
    st.text(
        st.characters(categories=["Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp", "Mn"]),
        min_size=1,
        max_size=40,
    ),
)
HEADERS = ["Last-Event-ID", "X-Request-Id", "Idempotency-Key", "Origin", "MCP-Protocol-Version"]


def write(value: Any) -> bytes:
    """JSON of `value` with every Raw token as it is."""
    if isinstance(value, Raw):
        return value.token
    if isinstance(value, dict):
        items = (write(str(key)) + b":" + write(item) for key, item in value.items())
        return b"{" + b",".join(items) + b"}"
    if isinstance(value, list | tuple):
        return b"[" + b",".join(write(item) for item in value) + b"]"
    return json.dumps(value).encode()


def as_text(value: Any) -> str:
    return value.text() if isinstance(value, Raw) else str(value)


@dataclasses.dataclass
class Request:
    method: str
    url: str
    headers: dict[str, Any]
    params: dict[str, Any]
    body: bytes | None
    where: str


def mutate(case: Any, base: str, key: str, place: str, value: Any) -> Request:
    """The case as Schemathesis drew it, with `value` put at `place`."""
    params = dict(case.path_parameters or {})
    query = dict(case.query or {})
    headers: dict[str, Any] = {**(case.headers or {}), "Authorization": f"Bearer {key}"}
    body: Any = case.body if case.body.__class__.__name__ != "NotSet" else None
    if place == "path" and params:
        params[sorted(params)[0]] = as_text(value)
    elif place == "query":
        query[sorted(query)[0] if query else "limit"] = as_text(value)
    elif place == "header":
        headers[HEADERS[len(as_text(value)) % len(HEADERS)]] = as_text(value)[:4000].encode(
            "utf-8", "surrogatepass")  # fmt: skip
    elif place == "field" and isinstance(body, dict) and body:
        body = {**body, sorted(body)[0]: value}
    elif place == "nested":
        body = {**(body if isinstance(body, dict) else {}), "messages": [{"parts": [value]}]}
    else:
        body = value
    path = case.operation.path
    for name, item in params.items():
        encoded = str(item).encode("utf-8", "surrogatepass")  # a lone surrogate as its bytes
        path = path.replace("{" + name + "}", urllib.parse.quote(encoded, safe=""))
    raw = write(body) if body is not None or place == "body" else None
    if raw is not None:
        headers["Content-Type"] = "application/json"
        headers.setdefault("Accept", "application/json, text/event-stream")
    return Request(case.method.upper(), base + path, headers, query, raw, place)


# -- the run -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Tally:
    requests: int = 0
    unsendable: int = 0
    statuses: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    per_operation: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    places: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    failures: list[str] = dataclasses.field(default_factory=list)


def send(session: requests.Session, request: Request, label: str, tally: Tally) -> None:
    try:
        response = session.request(request.method, request.url, headers=request.headers,
                                   params=request.params, data=request.body, timeout=(5, 30),
                                   stream=True, allow_redirects=False)  # fmt: skip
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError,
            UnicodeError):  # fmt: skip
        tally.unsendable += 1  # the client refused to send it (e.g. a header with \n)
        return
    with response:
        head = _head(response)
    tally.requests += 1
    tally.statuses[response.status_code] += 1
    tally.per_operation[label] += 1
    tally.places[request.where] += 1
    problem = _problem(response, head, label)
    if problem:
        tally.failures.append(f"{label} [{request.where}] -> {response.status_code}: {problem}")


def _head(response: requests.Response) -> bytes:
    """The body, or for an event stream what it sent in its first second and a half."""
    if "text/event-stream" not in response.headers.get("Content-Type", ""):
        return response.content
    if response.raw._fp is not None and response.raw._fp.fp is not None:
        response.raw._fp.fp.raw._sock.settimeout(1.5)
    got = b""
    try:
        for chunk in response.iter_content(4096):
            got += chunk
            if b"[DONE]" in got or len(got) > 64_000:
                break
    except (requests.exceptions.ConnectionError, TimeoutError, OSError):
        pass  # quiet past 1.5 s: a live tail
    return got


def _problem(response: requests.Response, head: bytes, label: str) -> str | None:
    status = response.status_code
    if status >= 500 and status not in DOCUMENTED_5XX:
        return head[:300].decode(errors="replace")
    if b'"code": "internal"' in head or b'"code":"internal"' in head:
        return "an internal error part in the stream"
    if status < 400 or "json" not in response.headers.get("Content-Type", ""):
        return None
    try:
        body = json.loads(head)
    except ValueError:
        return "a JSON refusal that is not JSON"
    error = body.get("error") if isinstance(body, dict) else None
    if label.split(" ", 1)[-1] in OAUTH and isinstance(error, str):
        return None  # an RFC 6749 / 7591 error
    if not isinstance(error, dict) or "code" not in error or "message" not in error:
        return f"not the error envelope: {head[:200]!r}"
    return None


def fuzz(base: str, key: str, document: dict[str, Any]) -> tuple[Tally, set[tuple[str, str]]]:
    schema = schemathesis.openapi.from_dict(document)
    tally, covered = Tally(), set()
    places = st.sampled_from(["field", "nested", "body", "query", "header", "path"])
    with requests.Session() as session:
        for result in schema.get_all_operations():
            operation = result.ok()
            covered.add((operation.method.upper(), operation.path))

            @hypothesis.settings(max_examples=EXAMPLES, deadline=None, database=None,
                                 suppress_health_check=list(hypothesis.HealthCheck),
                                 phases=[hypothesis.Phase.generate], derandomize=True)  # fmt: skip
            @hypothesis.given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
                              place=places, value=hostile_values)  # fmt: skip
            def one(case: Any, place: str, value: Any) -> None:
                session.cookies.clear()
                send(session, mutate(case, base, key, place, value), case.operation.label, tally)

            one()
    return tally, covered


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("lookout") and record.exc_info:
            self.records.append(f"{record.name}: {record.getMessage()} ({record.exc_info[0]})")


def _routes(served: Any) -> set[tuple[str, str]]:
    """(method, path template) of every route, /mcp's "*" as the methods it is sent."""
    found: set[tuple[str, str]] = set()
    for route in served.router.routes():
        if route.method == "HEAD" or route.resource is None:
            continue
        path = route.resource.canonical.replace("{path:.+}", "{path}")
        methods = ["POST", "GET", "DELETE"] if route.method == "*" else [route.method]
        found |= {(method, path) for method in methods}
    return found


@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_every_route_holds_huge_numbers_deep_nesting_and_unicode_edges(
    settings: Settings, tenant_factory: TenantFactory, sandbox: Sandbox
) -> None:
    # Given the app on a real port (metrics on), a key with plenty of credits, and a schema of
    # every route: the served OpenAPI document plus the routes it leaves out
    tenant = await tenant_factory(credits=10_000_000, rate_limit=10_000_000)
    served = app.create_app(settings.replace(
        allow_private_networks=False, fetch_timeout_s=2.0, fetch_connect_timeout_s=1.0,
        job_wait_s=0.5, maps_cache_ttl_s=0, metrics_token=METRICS_TOKEN))  # fmt: skip
    tracebacks = _Tracebacks()
    logging.getLogger().addHandler(tracebacks)
    try:
        async with hostile_fixtures.served(served) as base:
            document = await asyncio.to_thread(
                lambda: requests.get(f"{base}/v1/openapi.json", timeout=10).json()
            )
            document["paths"] |= UNDOCUMENTED
            # When every operation gets requests with one hostile value each
            tally, covered = await asyncio.to_thread(fuzz, base, tenant.key, document)
    finally:
        logging.getLogger().removeHandler(tracebacks)

    # Then every route was exercised, none answered 500 or logged a traceback, and every
    # refusal was the envelope
    hostile_fixtures.write_figures("hostile-every-route", {
        "title": "Hostile values on every route (Schemathesis + hypothesis)",
        "tried": tally.requests, "unsendable_by_client": tally.unsendable,
        "operations": len(tally.per_operation), "statuses": dict(sorted(tally.statuses.items())),
        "places": dict(tally.places), "failures": tally.failures[:30],
        "tracebacks": tracebacks.records[:10],
    })  # fmt: skip
    missing = _routes(served) - covered
    assert missing == set(), f"routes no operation covers: {sorted(missing)}"
    assert tally.failures == [], "\n".join(tally.failures[:10])
    assert tracebacks.records == [], tracebacks.records[:5]
    assert tally.statuses[500] == 0
    assert len(tally.per_operation) == len(covered) and tally.requests >= 5 * len(covered)
