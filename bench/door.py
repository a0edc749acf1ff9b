"""Benchmark: what the REST door adds to POST /v1/web/scrape, against a bare handler, same run.

    .venv/bin/python bench/door.py [--seconds 2] [--concurrency 16] [--latency-ms 50] [--rounds 9]

Both servers run in their own single process, on the event loop `lookout web` runs on
(LOOKOUT_EVENT_LOOP), and scrape the same local page with the same executor; the door adds
authentication (key lookup), the rate limit, credit reserve/settle with the ledger, and the
envelope. One load client (this process) drives each in turn, same concurrency and duration.

Two phases, two figures (issue #30; the 0 ms throughput ratio of #5 is retired):
- door's own CPU per call: a tiny page served at once; CPU ms a request of the server process
  plus Postgres and Redis (read from /proc), door minus bare. Target <= 1 ms.
- added to a one-page call: a real article page (tests/corpus/articles/) served after
  --latency-ms; p50 latency and CPU ms a request, door against bare, at --real-concurrency.
  Target: <= 10 % added to the call's p50 latency.
Each prints its figures, the bare baseline measured in the same run and the ratio. Every figure
is the median of --rounds rounds; in each round each phase runs bare and door one after the other,
bare first in odd rounds and door first in even ones. The door's own CPU is the median of each
round's door minus that round's bare: this machine's speed drifts within a minute (the bare
handler's CPU a request moved 1.6 -> 2.8 ms between runs minutes apart, and one round's own
CPU between 0.5 and 1.4 ms), so many short rounds, each compared with its neighbour, say more
than three long ones (3 x 5 s, medians apart: 0.94-1.71 ms over six runs of the same code).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs
import services

OWN_CPU_TARGET_MS = 1.0
ADDED_TARGET = 0.10
PAGE = (
    "<html><head><title>tiny</title></head>"
    "<body><main><h1>Tiny</h1><p>A small page.</p></main></body></html>"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_page(port: int, latency_ms: float) -> None:
    """/tiny at once; /article after `latency_ms` (a real article of the extraction corpus)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.corpus import mutations

    article = mutations.page_html(mutations.page_ids()[len(mutations.page_ids()) // 2])

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(latency_ms / 1000)
        return web.Response(text=article, content_type="text/html")

    app = web.Application()
    app.router.add_get("/tiny", page)
    app.router.add_get("/article", slow)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def serve_bare(port: int) -> None:
    """The same executor on the same page, with none of the door around it."""
    from lookout import capabilities, loops
    from lookout.capabilities import fetch, registry
    from lookout.settings import Settings

    settings = Settings.from_env()
    verb = capabilities.registry.get("web.scrape")

    async def progress(done: int, total: int) -> None:
        return None

    async def handle(request: web.Request) -> web.Response:
        data = registry.validate_input(verb, await request.json())
        context = registry.VerbContext(http=request.app[HTTP], settings=settings, progress=progress)
        return web.json_response(registry.dump_output(verb, await verb.execute(data, context)))

    HTTP = web.AppKey("http", aiohttp.ClientSession)

    async def http_ctx(app: web.Application) -> Any:
        async with fetch.open_session(settings) as session:
            app[HTTP] = session
            yield

    async def freeze(_: web.Application) -> None:
        loops.freeze_heap()  # as `lookout web` does once open

    app = web.Application()
    app.cleanup_ctx.append(http_ctx)
    app.on_startup.append(freeze)
    app.router.add_post("/v1/web/scrape", handle)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def serve_door(port: int) -> None:
    from lookout import app
    from lookout.settings import Settings

    web.run_app(
        app.create_app(Settings.from_env(), freeze_heap=True),
        host="127.0.0.1",
        port=port,
        print=None,
        access_log=None,
    )


async def seed(dsn: str) -> str:
    from lookout.access import accounts
    from lookout.db import migrate, pool

    await migrate.migrate(dsn)
    async with pool.pool_context(dsn, max_size=2) as db:
        user = await accounts.create_user(
            db, email=f"bench-{time.time_ns()}@example.com", password="bench-password-1"
        )
        workspace = await accounts.create_workspace(
            db, name="bench", owner_id=user.id, credits=10_000_000
        )
        key = await accounts.create_key(
            db, workspace_id=workspace.id, name="bench", rate_limit_per_minute=10_000_000
        )
    return key.text


async def wait_up(url: str) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(1200):  # a loaded machine: the app imports in seconds
            try:
                async with session.get(url) as response:
                    await response.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


async def load(
    url: str, body: dict[str, Any], headers: dict[str, str], seconds: float, concurrency: int
) -> dict[str, float]:
    latencies: list[float] = []
    failures = 0
    deadline = time.monotonic() + seconds

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal failures
        while time.monotonic() < deadline:
            start = time.perf_counter()
            async with session.post(url, json=body, headers=headers) as response:
                await response.read()
                if response.status != 200:
                    failures += 1
            latencies.append(time.perf_counter() - start)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.monotonic()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "failures": failures,
        "elapsed_s": elapsed,
    }


def spawn(role: str, port: int, env: dict[str, str], latency_ms: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, __file__, "--serve", role, "--port", str(port),
         "--latency-ms", str(latency_ms)], env=env,
    )  # fmt: skip


def service_pids(dsn: str, redis_url: str) -> list[int]:
    """The postmaster (its backends are its children) and redis-server."""
    import redis

    async def data_dir() -> str:
        import asyncpg

        conn = await asyncpg.connect(dsn)
        try:
            return str(await conn.fetchval("SHOW data_directory"))
        finally:
            await conn.close()

    pids = [int(Path(asyncio.run(data_dir()), "postmaster.pid").read_text().split()[0])]
    client = redis.Redis.from_url(redis_url)
    pids.append(int(client.info("server")["process_id"]))
    client.close()
    return pids


async def measure(
    args: argparse.Namespace, env: dict[str, str], key: str, backing: list[int]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """{phase: {role: figures of each round}} for the tiny page (own CPU) and the article
    (added)."""
    page_port, bare_port, door_port = free_port(), free_port(), free_port()
    roles = (("page", page_port), ("bare", bare_port), ("door", door_port))
    processes = {role: spawn(role, port, env, args.latency_ms) for role, port in roles}
    try:
        await wait_up(f"http://127.0.0.1:{page_port}/tiny")
        await wait_up(f"http://127.0.0.1:{door_port}/healthz")
        await asyncio.sleep(0.5)
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
        roles_in_turn = [
            ("bare", bare_port, {}),
            ("door", door_port, {"Authorization": f"Bearer {key}"}),
        ]
        for number in range(args.rounds):
            for phase, path, concurrency in (
                ("tiny", "/tiny", args.concurrency), ("article", "/article", args.real_concurrency),
            ):  # fmt: skip
                body = {"url": f"http://127.0.0.1:{page_port}{path}"}
                # bare then door, door then bare: neither always runs on the warmer machine
                for role, port, headers in roles_in_turn[:: 1 if number % 2 == 0 else -1]:
                    url = f"http://127.0.0.1:{port}/v1/web/scrape"
                    groups = {
                        "server": [processes[role].pid], "postgres+redis": backing,
                        "page": [processes["page"].pid],
                    }  # fmt: skip
                    result = await metered(url, body, headers, args, concurrency, groups)
                    runs.setdefault(phase, {}).setdefault(role, []).append(result)
        return runs
    finally:
        for process in processes.values():
            process.terminate()
            process.wait()


async def metered(
    url: str, body: dict[str, Any], headers: dict[str, str], args: argparse.Namespace,
    concurrency: int, groups: dict[str, list[int]],
) -> dict[str, Any]:  # fmt: skip
    await load(url, body, headers, 0.5, concurrency)  # warm-up
    before = {name: _procs.cpu_seconds(pids) for name, pids in groups.items()}
    client_before = time.process_time()  # this process alone (the servers are children)
    result = await load(url, body, headers, args.seconds, concurrency)
    count = result["rps"] * result["elapsed_s"]
    for name, pids in groups.items():
        result[f"cpu_ms_{name}"] = (_procs.cpu_seconds(pids) - before[name]) * 1000 / count
    result["cpu_ms_client"] = (time.process_time() - client_before) * 1000 / count
    return result


def median_of(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the rounds (this machine is noisy: one round's p50 moved the
    added latency between +7 and +13 %)."""
    merged = {key: statistics.median(result[key] for result in results) for key in results[0]}
    merged["failures"] = sum(result["failures"] for result in results)  # every one counts
    return merged


def served_ms(result: dict[str, Any]) -> float:
    """CPU ms a request of what serves it: the server process, Postgres and Redis."""
    return float(result["cpu_ms_server"] + result["cpu_ms_postgres+redis"])


def report(runs: dict[str, dict[str, list[dict[str, Any]]]], latency_ms: float) -> bool:
    found = {
        phase: {role: median_of(results) for role, results in by_role.items()}
        for phase, by_role in runs.items()
    }
    for phase, results in found.items():
        for role in ("door", "bare"):
            r = results[role]
            cpu = {k.removeprefix("cpu_ms_"): v for k, v in r.items() if k.startswith("cpu_ms_")}
            shares = ", ".join(f"{name} {ms:.2f}" for name, ms in cpu.items())
            print(f"{phase} {role}: {r['rps']:.0f} req/s, p50 {r['p50_ms']:.1f} ms, "
                  f"p99 {r['p99_ms']:.1f} ms, failures {r['failures']}; CPU ms a request: "
                  f"{sum(cpu.values()):.2f} ({shares})")  # fmt: skip
    tiny = found["tiny"]
    rounds = [
        served_ms(door) - served_ms(bare)
        for door, bare in zip(runs["tiny"]["door"], runs["tiny"]["bare"], strict=True)
    ]
    own = statistics.median(rounds)
    own_ok = own <= OWN_CPU_TARGET_MS
    door, bare = served_ms(tiny["door"]), served_ms(tiny["bare"])
    print(f"door's own CPU per call (tiny page): {own:.2f} ms, the median of each round's door "
          f"minus its bare (medians: {door:.2f} door, {bare:.2f} bare, {door / bare:.2f}x; "
          f"rounds {min(rounds):.2f}-{max(rounds):.2f}) | target <= {OWN_CPU_TARGET_MS} ms: "
          f"{'met' if own_ok else 'MISSED'}")  # fmt: skip
    real = found["article"]
    added = real["door"]["p50_ms"] / real["bare"]["p50_ms"] - 1
    cpu_added = served_ms(real["door"]) / served_ms(real["bare"]) - 1
    added_ok = added <= ADDED_TARGET
    print(f"added to a one-page call (article, {latency_ms:.0f} ms page latency): p50 "
          f"{real['door']['p50_ms']:.1f} door / {real['bare']['p50_ms']:.1f} bare ms = "
          f"{100 * added:+.1f} % | target <= {100 * ADDED_TARGET:.0f} %: "
          f"{'met' if added_ok else 'MISSED'}; CPU {served_ms(real['door']):.2f} / "
          f"{served_ms(real['bare']):.2f} ms = {100 * cpu_added:+.1f} %")  # fmt: skip
    return own_ok and added_ok


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=["page", "bare", "door"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--real-concurrency", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=9, help="figures are medians of the rounds")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    if args.serve:
        from lookout import loops
        from lookout.settings import Settings

        loops.install(Settings.from_env())  # both servers on the loop `lookout web` runs on
        if args.serve == "page":
            serve_page(args.port, args.latency_ms)
        else:
            {"bare": serve_bare, "door": serve_door}[args.serve](args.port)
        return 0
    with services.backing() as (dsn, redis_url):
        env = services.server_env(dsn, redis_url)
        key = asyncio.run(seed(dsn))
        runs = asyncio.run(measure(args, env, key, service_pids(dsn, redis_url)))
    ok = report(runs, args.latency_ms)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
