"""Load: 100 concurrent clients for 60 s against one `lookout web` and one `lookout worker`
(real processes), mixing REST verbs on local pages (inline and as jobs), chat turns streamed
over SSE, /events listeners that come and go, and plain reads.

What a user would notice: no 5xx and no dropped connection; p50/p99 per route are printed; the
web process's memory (RSS, from /proc) after the run is within 10 % of what it was after a
warm-up with the same mix (both read idle, 2 s after the clients stop).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from lookout.settings import Settings
from tests.integration import workers
from tests.integration.factories import Tenant, TenantFactory, tenant_factory
from tests.reliability import hostile_fixtures
from tests.reliability.hostile_fixtures import LeakWatch, leak_watch

__all__ = ["leak_watch", "tenant_factory"]

MIX = {"verbs": 35, "turns": 25, "listeners": 25, "readers": 15}  # 100 clients
WARMUP_S = 30.0
RUN_S = 60.0
IDLE_S = 2.0
RSS_TOLERANCE = 0.10
PAGES = 50
PAGE_SERVER = """
import sys
from aiohttp import web
links = "".join(f"<a href='/p/{i}'>page {i}</a> " for i in range(20))
def page(n):
    body = f"<h1>Page {n}</h1>" + "<p>Some real content about this page. </p>" * 30
    head = f"<head><title>Page {n}</title></head>"
    return f"<html>{head}<body><main>{body}{links}</main></body></html>"
async def serve(request):
    if request.path == "/sitemap.xml":
        urls = "".join(f"<url><loc>http://{request.host}/p/{i}</loc></url>" for i in range(30))
        xml = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        return web.Response(text=xml, content_type="application/xml")
    if request.path == "/robots.txt":
        raise web.HTTPNotFound()
    return web.Response(text=page(request.path), content_type="text/html")
app = web.Application()
app.router.add_get("/{tail:.*}", serve)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


@contextlib.contextmanager
def process(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process logging to `log`; SIGTERM (then SIGKILL) when done."""
    with log.open("wb") as sink:
        child = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            yield child
        finally:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


async def wait_ready(url: str, child: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            assert child.poll() is None, tail(log)
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.2)
    raise AssertionError(f"{url} not ready: " + tail(log))


def tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


@dataclasses.dataclass
class Recorder:
    latencies: dict[str, list[float]] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(list)
    )
    statuses: dict[str, collections.Counter[int]] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    errors: list[str] = dataclasses.field(default_factory=list)
    events: int = 0

    def record(self, route: str, status: int, seconds: float) -> None:
        self.latencies[route].append(seconds)
        self.statuses[route][status] += 1

    @contextlib.asynccontextmanager
    async def timed(self, route: str) -> AsyncIterator[list[int]]:
        """Time the block; the block appends the status it got."""
        started, status = time.monotonic(), [0]
        try:
            yield status
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.errors.append(f"{route}: {type(exc).__name__}: {exc}")
            return
        self.record(route, status[-1], time.monotonic() - started)


@dataclasses.dataclass
class Load:
    base: str
    pages: str
    tenant: Tenant
    chats: list[str]
    http: aiohttp.ClientSession
    rec: Recorder
    watch: LeakWatch
    until: float = 0.0

    @property
    def headers(self) -> dict[str, str]:
        return self.tenant.headers

    def page(self) -> str:
        return f"{self.pages}/p/{random.randrange(PAGES)}"

    async def pause(self) -> None:
        await asyncio.sleep(random.uniform(0.05, 0.25))

    async def post(self, route: str, path: str, body: Any) -> dict[str, Any] | None:
        async with (
            self.rec.timed(route) as status,
            self.http.post(self.base + path, json=body, headers=self.headers) as response,
        ):
            status.append(response.status)
            return await self._read(route, response)

    async def _read(self, route: str, response: aiohttp.ClientResponse) -> dict[str, Any] | None:
        text = await response.text()
        self.watch.body(route, text)
        return dict(json.loads(text)) if response.status < 500 else None

    async def get(self, route: str, path: str) -> dict[str, Any] | None:
        async with (
            self.rec.timed(route) as status,
            self.http.get(self.base + path, headers=self.headers) as response,
        ):
            status.append(response.status)
            return await self._read(route, response)


async def verbs_client(load: Load, index: int) -> None:
    while time.monotonic() < load.until:
        roll = random.random()
        if roll < 0.7:
            await load.post("POST /v1/web/scrape", "/v1/web/scrape", {"url": load.page()})
        elif roll < 0.85:
            site = {"url": f"{load.pages}/", "limit": 10}
            await load.post("POST /v1/web/discover", "/v1/web/discover", site)
        else:
            await _job(load)
        await load.pause()


async def _job(load: Load) -> None:
    body = {"urls": [load.page(), load.page()], "async": True}
    answer = await load.post("POST /v1/web/scrape (async: job)", "/v1/web/scrape", body)
    job_id = answer and answer["meta"].get("job_id")
    deadline = time.monotonic() + 30
    while job_id and time.monotonic() < deadline:
        found = await load.get("GET /v1/jobs/{job_id}", f"/v1/jobs/{job_id}")
        if found is None or found["data"] is None or found["data"]["result"] is not None:
            return
        await asyncio.sleep(0.2)


async def turns_client(load: Load, index: int) -> None:
    chat = load.chats[index]
    while time.monotonic() < load.until:
        text = f"what is on {load.page()} right now?"
        route = "POST /api/chats/{chat_id}/messages (whole turn)"
        async with (
            load.rec.timed(route) as status,
            load.http.post(
                f"{load.base}/api/chats/{chat}/messages", json={"text": text}, headers=load.headers
            ) as response,
        ):
            status.append(response.status)
            async for line in response.content:
                if line.startswith(b"data: [DONE]"):
                    break
        if random.random() < 0.3:
            await load.get("GET /api/chats/{chat_id}/messages", f"/api/chats/{chat}/messages")
        await load.pause()


async def listener_client(load: Load, index: int) -> None:
    chat = load.chats[index % len(load.chats)]
    while time.monotonic() < load.until:
        stay = min(random.uniform(3, 12), max(0.0, load.until - time.monotonic()))
        route = "GET /api/chats/{chat_id}/events (connect)"
        started = time.monotonic()
        try:
            async with load.http.get(
                f"{load.base}/api/chats/{chat}/events", headers=load.headers
            ) as response:
                load.rec.record(route, response.status, time.monotonic() - started)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(stay):
                        async for line in response.content:
                            load.rec.events += line.startswith(b"data:")
        except aiohttp.ClientError as exc:
            load.rec.errors.append(f"{route}: {type(exc).__name__}: {exc}")
        await load.pause()


async def readers_client(load: Load, index: int) -> None:
    reads = ["/api/chats", "/v1/usage", "/api/automations/watches", "/v1/verbs", "/api/me"]
    while time.monotonic() < load.until:
        path = random.choice(reads)
        await load.get(f"GET {path}", path)
        chat = random.choice(load.chats)
        await load.get("GET /api/chats/{chat_id}", f"/api/chats/{chat}")
        await load.pause()


CLIENTS: dict[str, Callable[[Load, int], Awaitable[None]]] = {
    "verbs": verbs_client,
    "turns": turns_client,
    "listeners": listener_client,
    "readers": readers_client,
}


async def drive(load: Load, seconds: float) -> None:
    """Every client of MIX for `seconds`, then all stopped."""
    load.until = time.monotonic() + seconds
    tasks = [CLIENTS[kind](load, index) for kind, count in MIX.items() for index in range(count)]
    await asyncio.gather(*tasks)


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))]  # noqa: E731
    return {"p50_ms": round(at(0.50) * 1000, 1), "p99_ms": round(at(0.99) * 1000, 1)}


def web_env(settings: Settings, port: int, metrics: str) -> dict[str, str]:
    return {
        **workers.env_for(settings),
        "PORT": str(port),
        "LOOKOUT_HOST": "127.0.0.1",
        "LOOKOUT_JOB_WAIT_S": "0.5",
        "LOOKOUT_DB_POOL_MAX": "20",
        "LOOKOUT_METRICS_DIR": metrics,
    }


@pytest.mark.slow
@pytest.mark.timeout(400)
async def test_100_clients_for_60_s_no_5xx_and_flat_memory(
    settings: Settings, tenant_factory: TenantFactory, leak_watch: LeakWatch
) -> None:
    # Given one web process, one worker, a local site and a key with plenty of credits
    tenant = await tenant_factory(credits=10_000_000, rate_limit=10_000_000)
    leak_watch.key("the API key", tenant.key)
    leak_watch.secret("LOOKOUT_SECRET_KEY", settings.secret_key)
    logs = Path(tempfile.mkdtemp(prefix="lookout-load-"))
    metrics = str(logs / "metrics")
    port, page_port = free_port(), free_port()
    env = web_env(settings, port, metrics)
    with (
        process([sys.executable, "-c", PAGE_SERVER, str(page_port)], dict(os.environ),
                logs / "pages.log"),
        process([sys.executable, "-m", "lookout.cli", "web"], env, logs / "web.log") as web,
        workers.running_worker(settings.replace(metrics_dir=metrics), processes=1,
                               threads=4) as worker_log,
    ):  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        await wait_ready(f"{base}/readyz", web, logs / "web.log")
        await wait_ready(f"http://127.0.0.1:{page_port}/", web, logs / "pages.log")
        leak_watch.log_file(logs / "web.log")
        leak_watch.log_file(worker_log)
        pages = f"http://127.0.0.1:{page_port}"
        figures = await _run(base, pages, tenant, web.pid, leak_watch)

    # Then no 5xx, no dropped connection, and the web process's memory stayed flat
    hostile_fixtures.write_figures("load", figures)
    assert figures["status_5xx"] == 0, figures["statuses"]
    assert figures["transport_errors"] == [], figures["transport_errors"]
    assert figures["requests"] > 1000, figures
    assert figures["rss_growth"] <= RSS_TOLERANCE, figures
    leak_watch.verify()


async def _run(
    base: str, pages: str, tenant: Tenant, web_pid: int, watch: LeakWatch
) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        chats = []
        for index in range(MIX["turns"]):
            async with http.post(f"{base}/api/chats", json={"title": f"load {index}"},
                                 headers=tenant.headers) as response:  # fmt: skip
                chats.append((await response.json())["data"]["id"])
        warm = Load(base, pages, tenant, chats, http, Recorder(), watch)
        await drive(warm, WARMUP_S)
        await asyncio.sleep(IDLE_S)
        rss_warm = rss_kib(web_pid)
        load = Load(base, pages, tenant, chats, http, Recorder(), watch)
        samples = [rss_warm]
        sampler = asyncio.create_task(_sample(web_pid, samples))
        started = time.monotonic()
        await drive(load, RUN_S)
        elapsed = time.monotonic() - started
        sampler.cancel()
        await asyncio.sleep(IDLE_S)
        rss_after = rss_kib(web_pid)
    return _figures(load.rec, warm.rec, elapsed, rss_warm, rss_after, samples)


async def _sample(pid: int, samples: list[int]) -> None:
    """RSS every 5 s while the clients run."""
    while True:
        await asyncio.sleep(5)
        samples.append(rss_kib(pid))


def _figures(
    rec: Recorder, warm: Recorder, elapsed: float, rss_warm: int, rss_after: int, samples: list[int]
) -> dict[str, Any]:
    statuses: collections.Counter[int] = collections.Counter()
    for counts in rec.statuses.values():
        statuses.update(counts)
    rows = [
        {"route": route, "requests": len(times), **percentiles(times),
         "statuses": dict(sorted(rec.statuses[route].items()))}
        for route, times in sorted(rec.latencies.items())
    ]  # fmt: skip
    requests = sum(statuses.values())
    warm_5xx = sum(n for c in warm.statuses.values() for s, n in c.items() if s >= 500)
    return {
        "title": "Load: 100 clients for 60 s",
        "what": f"{sum(MIX.values())} concurrent clients ({MIX['verbs']} REST verb callers on "
        f"local pages, 15 % of them as jobs for the worker; {MIX['turns']} chat turns streamed "
        f"over SSE; {MIX['listeners']} /events listeners reconnecting every 3-12 s; "
        f"{MIX['readers']} readers) for {RUN_S:g} s after a {WARMUP_S:g} s warm-up, against "
        "one `lookout web` and one `lookout worker` (1 process, 4 threads) on this 2-core "
        "machine, with Postgres and Redis on it too.",
        "tried": requests,
        "held": requests - sum(n for s, n in statuses.items() if s >= 500) - len(rec.errors),
        "requests": requests,
        "requests_per_s": round(requests / elapsed, 1),
        "status_5xx": sum(n for s, n in statuses.items() if s >= 500) + warm_5xx,
        "statuses": dict(sorted(statuses.items())),
        "transport_errors": rec.errors + warm.errors,
        "sse_events_received": rec.events,
        "rss_after_warmup_mib": round(rss_warm / 1024, 1),
        "rss_peak_mib": round(max(samples) / 1024, 1),
        "rss_every_5_s_mib": [round(kib / 1024, 1) for kib in samples],
        "rss_after_run_mib": round(rss_after / 1024, 1),
        "rss_growth": round((rss_after - rss_warm) / rss_warm, 4),
        "p50_all_ms": round(
            statistics.median(t for ts in rec.latencies.values() for t in ts) * 1000, 1
        ),
        "rows": rows,
    }
