"""Schemathesis against /v1/openapi.json: every operation, positive and negative inputs, a valid
key with plenty of credits. No answer is a 500 and every answer matches its documented schema.

The app is served on a real port inside the network sandbox with private networks off (as in
production): a generated URL that names loopback or a private address is refused by the guard,
a public address is refused by the sandbox (no packet leaves the machine), and every name is
unknown. The providers (Nominatim, Google Places, SearXNG) are local fakes, so the maps and
search verbs answer real results too.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from typing import Any

import hypothesis
import pytest
import requests
import schemathesis
from aiohttp.test_utils import TestServer
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi import checks

from lookout import app
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.reliability import hostile_fixtures
from tests.reliability.hostile_fixtures import LeakWatch, Sandbox, leak_watch, sandbox

__all__ = ["leak_watch", "sandbox", "tenant_factory"]

EXAMPLES = 45  # per operation and mode; small operations run out of distinct inputs sooner
MIN_REQUESTS = 1000
# not_a_server_error runs with 501/502/503 allowed: they are documented answers (no provider,
# a provider failing); a 500 is counted separately and never allowed.
CHECKS = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.negative_data_rejection,
]
DOCUMENTED_5XX = {501, 502, 503}
NO_INPUTS = {"GET /v1/verbs"}  # one request is all there is to send


@dataclasses.dataclass
class Tally:
    requests: int = 0
    statuses: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    per_operation: dict[str, collections.Counter[str]] = dataclasses.field(default_factory=dict)
    failures: list[str] = dataclasses.field(default_factory=list)
    unsendable: int = 0
    unsatisfiable: list[str] = dataclasses.field(default_factory=list)

    def count(self, label: str, mode: str, status: int) -> None:
        self.requests += 1
        self.statuses[status] += 1
        self.per_operation.setdefault(label, collections.Counter())[mode] += 1


def fuzz(base: str, key: str, watch: LeakWatch) -> Tally:
    """Run every operation in both modes; failures are collected, not raised, to count them."""
    schema = schemathesis.openapi.from_url(f"{base}/v1/openapi.json")
    auth = {"Authorization": f"Bearer {key}"}
    tally = Tally()
    with requests.Session() as session:
        for result in schema.get_all_operations():
            operation = result.ok()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                _exercise(operation, mode, base, session, auth, watch, tally)
    return tally


def _exercise(
    operation: Any,
    mode: GenerationMode,
    base: str,
    session: requests.Session,
    auth: dict[str, str],
    watch: LeakWatch,
    tally: Tally,
) -> None:
    label = operation.label

    @hypothesis.settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    )
    @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
    def one(case: Any) -> None:
        session.cookies.clear()  # every request stands alone: the key, no session
        try:
            response = case.call(base_url=base, session=session, headers=auth, timeout=30)
        except (requests.exceptions.InvalidHeader, ValueError, UnicodeError):
            tally.unsendable += 1  # the HTTP client refused to send it (e.g. a header with \n)
            return
        tally.count(label, mode.value, response.status_code)
        watch.body(label, response.content)
        _check(case, response, base, session, auth, label, tally)

    try:
        one()
    except hypothesis.errors.Unsatisfiable:
        tally.unsatisfiable.append(f"{label} ({mode.value})")


def _check(
    case: Any,
    response: Any,
    base: str,
    session: requests.Session,
    auth: dict[str, str],
    label: str,
    tally: Tally,
) -> None:
    status = response.status_code
    if status >= 500 and status not in DOCUMENTED_5XX:
        tally.failures.append(f"{label}: HTTP {status}\n{case.as_curl_command(headers=auth)}")
        return
    transport = {"base_url": base, "session": session, "headers": auth}
    selected = CHECKS if status >= 500 else [not_a_server_error, *CHECKS]
    if status == 413:  # too large is a refusal too (schemathesis only counts 400, 401, 403, …)
        selected = [check for check in selected if check is not checks.negative_data_rejection]
    try:
        case.validate_response(response, checks=selected, headers=auth, transport_kwargs=transport)
    except FailureGroup as exc:
        tally.failures.append(f"{label}: {str(exc)[:1500]}")


@pytest.mark.slow
@pytest.mark.timeout(420)
async def test_every_operation_answers_within_its_documented_schema_and_never_500(
    settings: Settings,
    tenant_factory: TenantFactory,
    aiohttp_server: Any,
    sandbox: Sandbox,
    leak_watch: LeakWatch,
) -> None:
    # Given the app on a real port, local providers, and a key with plenty of credits
    fakes = [providers.FakeNominatim(), providers.FakePlaces(), providers.FakeSearxng()]
    for fake in fakes:
        await providers.serve(fake, aiohttp_server)
    osm, places, searxng = fakes
    tenant = await tenant_factory(credits=10_000_000, rate_limit=10_000_000)
    leak_watch.key("the API key", tenant.key)
    leak_watch.secret("LOOKOUT_SECRET_KEY", settings.secret_key)
    served = app.create_app(
        settings.replace(
            allow_private_networks=False, fetch_timeout_s=2.0, fetch_connect_timeout_s=1.0,
            job_wait_s=0.5, maps_cache_ttl_s=0, nominatim_url=osm.url,
            google_places_url=places.url, google_places_key=providers.GOOGLE_KEY,
            search_url=searxng.url,
        )
    )  # fmt: skip

    # When Schemathesis generates requests for every operation, valid and invalid
    async with hostile_fixtures.served(served) as base:
        tally = await asyncio.to_thread(fuzz, base, tenant.key, leak_watch)

    # Then none is a 500, and every answer matched its documented status, type and schema
    figures = _figures(tally, sandbox, [server_of(fake) for fake in fakes])
    hostile_fixtures.write_figures("hostile-openapi", figures)
    assert tally.requests >= MIN_REQUESTS, figures
    assert tally.statuses[500] == 0, tally.failures[:3]
    assert tally.failures == [], "\n\n".join(tally.failures[:5])
    thin = [label for label, modes in tally.per_operation.items()
            if modes["positive"] < 10 and label not in NO_INPUTS]  # fmt: skip
    assert thin == [], f"documented without inputs to vary: {thin}"
    leak_watch.verify()


def server_of(fake: providers.Fake) -> TestServer:
    assert fake.server is not None
    return fake.server


def _figures(tally: Tally, sandbox: Sandbox, servers: list[TestServer]) -> dict[str, Any]:
    rows = [
        {"operation": label, "positive": modes["positive"], "negative": modes["negative"]}
        for label, modes in sorted(tally.per_operation.items())
    ]
    return {
        "title": "Schemathesis against /v1/openapi.json",
        "what": "Generated requests for every documented operation, valid (positive) and "
        "schema-violating (negative), with a valid key; each answer checked for a 500, its "
        "documented status, content type, headers and body schema, and that invalid input "
        "was rejected with a 4xx.",
        "tried": tally.requests,
        "held": tally.requests - len(tally.failures),
        "operations": len(tally.per_operation),
        "status_500": tally.statuses[500],
        "schema_failures": len(tally.failures),
        "statuses": dict(sorted(tally.statuses.items())),
        "unsendable_by_client": tally.unsendable,
        "modes_without_inputs": tally.unsatisfiable,
        "sandbox_refused_connections": len(sandbox.refused),
        "sandbox_unknown_names": len(sandbox.lookups),
        "rows": rows,
        "notes": "Private networks off; no real DNS; sockets to non-loopback addresses fail "
        f"in the sandbox ({len(servers)} local provider fakes stand in for the real ones).",
    }
