"""JSON-RPC fuzzing of POST /mcp (Hypothesis): malformed bytes, deep nesting, oversized bodies,
wrong types, unknown methods, random params and tool arguments, hostile headers. Every answer is
a JSON-RPC error or result (or 202 for a notification), never a 5xx.

Served on a real port inside the network sandbox, private networks off: a generated tool call
that names a URL is refused by the guard or the sandbox, never sent off this machine.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
from typing import Any

import hypothesis
import pytest
import requests
from hypothesis import strategies as st

from lookout import app
from lookout.settings import Settings
from tests.integration.factories import TenantFactory, tenant_factory
from tests.reliability import hostile_fixtures
from tests.reliability.hostile_fixtures import LeakWatch, Sandbox, leak_watch, sandbox

__all__ = ["leak_watch", "sandbox", "tenant_factory"]

LIMIT = 64 * 1024  # max_body_bytes of the app under test: oversized bodies stay cheap
EXAMPLES = 900
KNOWN = ["initialize", "ping", "tools/list", "tools/call", "notifications/initialized",
         "notifications/cancelled", "resources/list", "prompts/list", "completion/complete",
         "logging/setLevel", "server/discover", "sampling/createMessage"]  # fmt: skip
JSONRPC_CODES = {-32700, -32600, -32601, -32602, -32603}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=40),
    st.integers(min_value=2**63, max_value=2**80),
)  # fmt: skip
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=16,
)
ids = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=20), st.floats(), st.booleans(),
                st.none(), st.lists(st.integers(), max_size=2), st.just({}))  # fmt: skip


def _dump(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


def _message(
    method: Any, params: Any = None, *, id_: Any = 1, version: Any = "2.0"
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": version, "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _nested(depth: int, kind: str) -> str:
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


@dataclasses.dataclass(frozen=True)
class Attempt:
    category: str
    body: bytes
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


HEADERS = ["Content-Type", "Accept", "MCP-Protocol-Version", "Origin", "Mcp-Session-Id",
           "Authorization"]  # fmt: skip


def _call(tool: str, arguments: Any) -> dict[str, Any]:
    return _message("tools/call", {"name": tool, "arguments": arguments})


def _truncated(tool: str) -> st.SearchStrategy[Attempt]:
    def cut(n: int, at: int) -> Attempt:
        return Attempt("truncated JSON", _dump(_call(tool, {"url": "x" * n}))[:at])

    return st.builds(cut, st.integers(0, 50), st.integers(0, 80))


def _deep() -> st.SearchStrategy[Attempt]:
    def nest(depth: int, kind: str, wrapped: bool) -> Attempt:
        inner = _nested(depth, kind).encode()
        prefix = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
        return Attempt("deep nesting", prefix + inner + b"}" if wrapped else inner)

    kinds = st.sampled_from(["list", "dict"])
    return st.builds(nest, st.integers(500, 12_000), kinds, st.booleans())


def _oversized(tool: str) -> st.SearchStrategy[Attempt]:
    def big(extra: int, method: str) -> Attempt:
        params = {"name": tool, "arguments": {"url": "x" * (LIMIT + extra)}}
        return Attempt("oversized", _dump(_message(method, params)))

    return st.builds(big, st.integers(0, 5000), st.sampled_from(["tools/call", "ping"]))


def _wrong_types() -> st.SearchStrategy[Attempt]:
    def wrong(version: Any, id_: Any, method: Any, params: Any) -> Attempt:
        return Attempt("wrong types", _dump(_message(method, params, id_=id_, version=version)))

    versions = st.sampled_from(["2.0", "1.0", 2.0, None, ""])
    methods = st.one_of(st.sampled_from(KNOWN), json_values)
    return st.builds(wrong, versions, ids, methods, json_values)


def _unknown_method() -> st.SearchStrategy[Attempt]:
    def unknown(method: str, params: Any, id_: Any) -> Attempt:
        return Attempt("unknown method", _dump(_message(method, params, id_=id_)))

    names = st.text(min_size=1, max_size=40).filter(lambda m: m not in KNOWN)
    params = st.none() | st.dictionaries(st.text(max_size=8), json_values)
    return st.builds(unknown, names, params, st.integers() | st.text(max_size=10))


def _random_params() -> st.SearchStrategy[Attempt]:
    def known(method: str, params: Any) -> Attempt:
        return Attempt("known method, random params", _dump(_message(method, params)))

    return st.builds(known, st.sampled_from(KNOWN), json_values)


def _random_arguments(tool_names: list[str]) -> st.SearchStrategy[Attempt]:
    def arguments(tool: str, args: Any) -> Attempt:
        return Attempt("tools/call, random arguments", _dump(_call(tool, args)))

    objects = st.dictionaries(st.text(max_size=12), json_values, max_size=5)
    return st.builds(arguments, st.sampled_from(tool_names) | st.text(max_size=30),
                     objects | json_values)  # fmt: skip


def _hostile_headers() -> st.SearchStrategy[Attempt]:
    printable = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
    headers = st.dictionaries(st.sampled_from(HEADERS), printable, min_size=1, max_size=3)
    return headers.map(lambda h: Attempt("hostile headers", _dump(_message("ping")), h))


def attempts(tool_names: list[str]) -> st.SearchStrategy[Attempt]:
    """Every kind of hostile request, labelled by category."""
    return st.one_of(
        st.binary(max_size=300).map(lambda b: Attempt("malformed bytes", b)),
        _truncated(tool_names[0]),
        _deep(),
        _oversized(tool_names[0]),
        json_values.map(lambda v: Attempt("random JSON document", _dump(v))),
        _wrong_types(),
        _unknown_method(),
        _random_params(),
        _random_arguments(tool_names),
        _hostile_headers(),
    )


@dataclasses.dataclass
class Tally:
    requests: int = 0
    by_category: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    statuses: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    rpc_codes: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    tool_errors: int = 0
    failures: list[str] = dataclasses.field(default_factory=list)


def judge(attempt: Attempt, status: int, raw: bytes, tally: Tally) -> None:
    """A JSON-RPC answer (or an empty 202), never a 5xx; failures are collected."""
    problem = _problem(status, raw, tally)
    if problem:
        shown = attempt.body[:200] + (b"..." if len(attempt.body) > 200 else b"")
        tally.failures.append(f"{attempt.category}: {problem}; sent {shown!r} {attempt.headers}")


def _problem(status: int, raw: bytes, tally: Tally) -> str | None:
    if status >= 500:
        return f"HTTP {status}: {raw[:300]!r}"
    if status == 202:
        return None if raw == b"" else "202 with a body"
    try:
        answer = json.loads(raw)
    except ValueError:
        return f"HTTP {status} with a body that is not JSON: {raw[:200]!r}"
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
        return f"not a JSON-RPC answer: {raw[:200]!r}"
    if "error" in answer:
        error = answer["error"]
        if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
            return f"malformed error: {error!r}"
        tally.rpc_codes[str(error["code"])] += 1
        return None if error["code"] in JSONRPC_CODES else f"unexpected code {error['code']}"
    if status != 200 or "result" not in answer:
        return f"HTTP {status} without a result or an error"
    tally.rpc_codes["result"] += 1
    tally.tool_errors += bool(answer["result"].get("isError"))
    return None


def fuzz(base: str, key: str, watch: LeakWatch) -> Tally:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {key}"}  # fmt: skip
    tally = Tally()
    with requests.Session() as session:
        listing = session.post(f"{base}/mcp", data=_dump(_message("tools/list")), headers=headers)
        tool_names = [tool["name"] for tool in listing.json()["result"]["tools"]]

        @hypothesis.settings(
            max_examples=EXAMPLES, deadline=None, database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        )  # fmt: skip
        @hypothesis.given(attempt=attempts(tool_names))
        # Found by this test: the standard library's header parser raised IndexError on it.
        @hypothesis.example(
            attempt=Attempt(
                "hostile headers", _dump(_message("ping")), {"Content-Type": "yO]zX<8;C5*"}
            )
        )
        def one(attempt: Attempt) -> None:
            sent = {**headers, **attempt.headers}
            try:
                response = session.post(f"{base}/mcp", data=attempt.body, headers=sent, timeout=30)
            except (requests.exceptions.InvalidHeader, ValueError, UnicodeError):
                return  # the client would not send it
            tally.requests += 1
            tally.by_category[attempt.category] += 1
            tally.statuses[response.status_code] += 1
            watch.body(attempt.category, response.content)
            judge(attempt, response.status_code, response.content, tally)

        one()
    return tally


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_hostile_json_rpc_is_answered_with_json_rpc_errors_never_a_5xx(
    settings: Settings, tenant_factory: TenantFactory, sandbox: Sandbox, leak_watch: LeakWatch
) -> None:
    # Given the MCP door on a real port and a key with plenty of credits
    tenant = await tenant_factory(credits=10_000_000, rate_limit=10_000_000)
    leak_watch.key("the API key", tenant.key)
    leak_watch.secret("LOOKOUT_SECRET_KEY", settings.secret_key)
    served = app.create_app(
        settings.replace(allow_private_networks=False, max_body_bytes=LIMIT, fetch_timeout_s=2.0,
                         fetch_connect_timeout_s=1.0, job_wait_s=0.5)
    )  # fmt: skip

    # When Hypothesis sends hundreds of malformed, oversized, mistyped and unknown messages
    async with hostile_fixtures.served(served) as base:
        tally = await asyncio.to_thread(fuzz, base, tenant.key, leak_watch)

    # Then each was answered as JSON-RPC at a 2xx or 4xx status
    figures = {
        "title": "JSON-RPC fuzzing of /mcp",
        "what": "Hypothesis-generated POSTs to /mcp with a valid key: malformed bytes, truncated "
        "and deeply nested JSON, bodies over the size limit, wrong types for jsonrpc/id/method/"
        "params, unknown methods, random params and tool arguments, hostile headers. Held = "
        "answered with a JSON-RPC error or result (or an empty 202 for a notification), not 5xx.",
        "tried": tally.requests,
        "held": tally.requests - len(tally.failures),
        "status_5xx": sum(n for status, n in tally.statuses.items() if status >= 500),
        "statuses": dict(sorted(tally.statuses.items())),
        "json_rpc_answers": dict(sorted(tally.rpc_codes.items())),
        "tool_results_with_isError": tally.tool_errors,
        "rows": [{"category": c, "tried": n} for c, n in sorted(tally.by_category.items())],
        "sandbox_refused_connections": len(sandbox.refused),
    }
    hostile_fixtures.write_figures("hostile-mcp", figures)
    assert tally.requests >= EXAMPLES // 2, figures
    assert tally.failures == [], "\n".join(tally.failures[:10])
    assert len(tally.by_category) == 10, figures
    leak_watch.verify()
