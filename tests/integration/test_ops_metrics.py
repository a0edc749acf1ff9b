"""GET /metrics after a REST call, a chat turn and a watch run a real worker ran."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from lookout import app, broker
from lookout.settings import Settings
from tests.integration import sse, workers
from tests.integration.factories import Site, TenantFactory, site, tenant_factory
from tests.integration.test_watches import dispatch_and_send, make_due, make_watch, page, wait_run

__all__ = ["page", "site", "tenant_factory"]

TOKEN = "metrics-token-for-tests"
Samples = dict[str, list[tuple[dict[str, str], float]]]


@pytest.fixture
def ops_settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.replace(metrics_token=TOKEN, metrics_dir=str(tmp_path / "metrics"))


@pytest.fixture
async def client(aiohttp_client: Any, ops_settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(ops_settings))


@pytest.fixture
def worker(ops_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A real worker writing its metrics where the web process reads them."""
    monkeypatch.setenv("LOOKOUT_METRICS_DIR", ops_settings.metrics_dir)
    broker.setup(ops_settings)
    with workers.running_worker(ops_settings, processes=1, threads=2):
        yield


async def scrape(client: Any) -> Samples:
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    found: Samples = {}
    for family in text_string_to_metric_families(await response.text()):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name` over samples whose labels include `labels`."""
    matching = [v for found, v in samples.get(name, []) if labels.items() <= found.items()]
    assert matching, f"no {name}{labels}; have {samples.get(name)}"
    return sum(matching)


async def test_metrics_cover_a_rest_call_a_chat_turn_and_a_watch_run(
    client: Any,
    ops_settings: Settings,
    db: asyncpg.Pool,
    tenant_factory: TenantFactory,
    site: Site,
    page: dict[str, Any],
    worker: None,
) -> None:
    # Given a REST call, a chat turn over SSE, and a watch run on a real worker
    tenant = await tenant_factory(credits=50)
    scraped = await client.post(
        "/v1/web/scrape", json={"url": site.url("/hello")}, headers=tenant.headers
    )
    assert scraped.status == 200
    created = await client.post("/api/chats", json={}, headers=tenant.headers)
    chat_id = (await created.json())["data"]["id"]
    base = str(client.make_url("")).rstrip("/")
    turn = await sse.stream(
        base, "POST", f"/api/chats/{chat_id}/messages", headers=tenant.headers,
        json_body={"text": f"what is on {site.url('/menu')} right now?"},
    )  # fmt: skip
    assert turn.types[-1] == "finish"
    watch = await make_watch(db, ops_settings, tenant, page["url"])
    await make_due(db, watch.id, ago="2 minutes")
    await dispatch_and_send(db)
    await wait_run(db, watch.id, 1)

    # When Prometheus scrapes the web process
    samples = await scrape(client)

    # Then requests are labelled by route template (never the raw path), with latency
    requests = "lookout_http_requests_total"
    assert value(samples, requests, route="/v1/web/scrape", method="POST", status="200") >= 1
    assert value(samples, requests, route="/api/chats/{chat_id}/messages", status="200") >= 1
    assert not any(chat_id in labels.get("route", "") for labels, _ in samples[requests])
    latency = "lookout_http_request_duration_seconds_count"
    assert value(samples, latency, route="/v1/web/scrape") >= 1
    # And verb calls by verb, door and outcome, with the credits they charged
    calls = "lookout_verb_calls_total"
    assert value(samples, calls, verb="web.scrape", door="rest", outcome="ok") >= 1
    assert value(samples, calls, verb="web.scrape", door="chat", outcome="ok") >= 1
    assert value(samples, "lookout_credits_charged_total", verb="web.scrape", door="rest") >= 1
    # And turns by source and outcome: the API's here, the watch's from the worker's process
    turns = "lookout_chat_turns_total"
    assert value(samples, turns, source="api", outcome="succeeded") >= 1
    assert value(samples, turns, source="automation", outcome="succeeded") >= 1
    assert value(samples, "lookout_chat_turn_duration_seconds_count", source="api") >= 1
    assert value(samples, "lookout_watch_runs_total", status="succeeded") >= 1
    lag = "lookout_watch_dispatch_lag_seconds_bucket"  # the watch was two minutes late
    assert value(samples, lag, le="300.0") - value(samples, lag, le="60.0") >= 1
    assert value(samples, "lookout_worker_messages_total", actor="chat_message", outcome="ok") >= 1
    # And what is true now: backing services, pool, backlog, queues, open streams
    assert value(samples, "lookout_postgres_up") == 1
    assert value(samples, "lookout_redis_up") == 1
    assert value(samples, "lookout_db_pool_max") == ops_settings.db_pool_max
    assert value(samples, "lookout_watches_overdue") == 0
    assert value(samples, "lookout_watch_runs_last_hour", status="succeeded") == 1
    assert value(samples, "lookout_queue_messages", queue="watches", state="ready") == 0
    assert value(samples, "lookout_sse_streams_open") == 0


async def test_metrics_need_the_token(client: Any) -> None:
    assert (await client.get("/metrics")).status == 401
    wrong = await client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status == 401


async def test_metrics_are_off_without_a_token_or_port(
    aiohttp_client: Any, settings: Settings
) -> None:
    plain = await aiohttp_client(app.create_app(settings))
    assert (await plain.get("/metrics")).status == 404


async def test_a_private_port_serves_metrics_without_a_token(
    aiohttp_client: Any, unused_tcp_port: int, settings: Settings
) -> None:
    import aiohttp

    port = unused_tcp_port
    await aiohttp_client(app.create_app(settings.replace(metrics_port=port)))
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/metrics") as got:
        assert got.status == 200
        assert "lookout_postgres_up 1.0" in await got.text()
