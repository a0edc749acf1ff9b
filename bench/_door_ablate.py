"""Where the REST door's cost goes: bench/door.py's door with its round trips taken out.

    .venv/bin/python bench/_door_ablate.py [--seconds 4] [--rounds 3] [--concurrency 16]

A diagnostic, not part of `make bench`. The bare handler and one door server per variant run
side by side (each its own process, as in door.py); each variant's server monkeypatches
Lookout in its own process only (src/ is not edited). Variants are loaded in turn, each round
starting with the next, and the best round of each is compared with the bare handler's best.
Variants:
- as is: authentication, rate limit (Redis), reserve and settle (Postgres), envelope
- no settle: the settle statement skipped (the reservation is reported as charged)
- no reserve: the reserve statement skipped (the settle then finds no reservation)
- no ledger: neither reserve nor settle
- no rate limit: the Redis script skipped
- no round trip: none of the three; what is left is the door's own Python (authentication from
  the key cache, validation, middlewares, metrics, the envelope)
Printed per variant: requests/s, the ratio to the bare handler, the server process's user and
system CPU a request (where the round trips cost: user time in asyncpg, redis-py, asyncio), the
CPU of Postgres and Redis a request (read from /proc, as door.py does), and what the variant adds
to the bare handler's CPU (server + Postgres + Redis), median of the rounds: the difference
between two variants is what the stage they differ by costs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs
import door
import services

SKIPS = {
    "as is": set(),
    "no settle": {"settle"},
    "no reserve": {"reserve"},
    "no ledger": {"reserve", "settle"},
    "no rate limit": {"rate limit"},
    "no round trip": {"reserve", "settle", "rate limit"},
}


def serve(variant: str, port: int) -> None:
    from lookout import loops
    from lookout.access import credits, invoke
    from lookout.settings import Settings

    skips = SKIPS[variant]

    async def no_reserve(*args: Any, **kwargs: Any) -> None:
        return None

    async def no_settle(*args: Any, charged: int, **kwargs: Any) -> int:
        return charged

    async def no_rate_limit(*args: Any) -> None:
        return None

    if "reserve" in skips:
        credits.reserve = no_reserve
    if "settle" in skips:
        credits.settle = no_settle
    if "rate limit" in skips:
        invoke.rate_limit = no_rate_limit
    loops.install(Settings.from_env())
    door.serve_door(port)


def spawn(variant: str, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "--serve", variant, "--port", str(port)]
    return subprocess.Popen(command, env=env)


def cpu_ms(pid: int) -> tuple[float, float]:
    """(user, system) CPU milliseconds of `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = 1000 / os.sysconf("SC_CLK_TCK")
    return int(fields[11]) * tick, int(fields[12]) * tick


async def measure(
    args: argparse.Namespace, env: dict[str, str], key: str, backing: list[int]
) -> None:
    page_port = door.free_port()
    ports = {name: door.free_port() for name in ["bare", *SKIPS]}
    processes = [door.spawn("page", page_port, env, 0), door.spawn("bare", ports["bare"], env, 0)]
    pids = {"bare": processes[-1].pid}
    for variant in SKIPS:
        processes.append(spawn(variant, ports[variant], env))
        pids[variant] = processes[-1].pid
    try:
        await door.wait_up(f"http://127.0.0.1:{page_port}/tiny")
        for variant in SKIPS:
            await door.wait_up(f"http://127.0.0.1:{ports[variant]}/healthz")
        await asyncio.sleep(1.0)  # the bare handler has no health route: give it time to bind
        body = {"url": f"http://127.0.0.1:{page_port}/tiny"}
        headers = {"Authorization": f"Bearer {key}"}
        names = list(ports)
        best: dict[str, dict[str, float]] = {}
        served: dict[str, list[float]] = {name: [] for name in names}
        for number in range(args.rounds):
            for name in names[number % len(names) :] + names[: number % len(names)]:
                url = f"http://127.0.0.1:{ports[name]}/v1/web/scrape"
                await door.load(url, body, headers, 0.5, args.concurrency)  # warm-up
                user, system = cpu_ms(pids[name])
                services_before = _procs.cpu_seconds(backing)
                result = await door.load(url, body, headers, args.seconds, args.concurrency)
                services_s = _procs.cpu_seconds(backing) - services_before
                assert result["failures"] == 0, (name, result)
                count = result["rps"] * result["elapsed_s"]
                after = cpu_ms(pids[name])
                result["user_ms"] = (after[0] - user) / count
                result["sys_ms"] = (after[1] - system) / count
                result["services_ms"] = services_s * 1000 / count
                served[name].append(result["user_ms"] + result["sys_ms"] + result["services_ms"])
                if result["rps"] > best.get(name, {}).get("rps", 0):
                    best[name] = result
        bare = statistics.median(served["bare"])
        for name in names:
            r, median = best[name], statistics.median(served[name])
            print(
                f"{name:<14} {r['rps']:6.0f} req/s  {r['rps'] / best['bare']['rps']:.2f}x bare  "
                f"server CPU a request: user {r['user_ms']:.2f} ms, system {r['sys_ms']:.2f} ms; "
                f"postgres+redis {r['services_ms']:.2f} ms | added to bare (median of "
                f"{len(served[name])}): {median - bare:+.2f} ms"
            )
    finally:
        for process in processes:
            process.terminate()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=list(SKIPS))
    parser.add_argument("--port", type=int)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return 0
    with services.backing() as (dsn, redis_url):
        env = services.server_env(dsn, redis_url)
        key = asyncio.run(door.seed(dsn))
        started = time.monotonic()
        print("load average", Path("/proc/loadavg").read_text().split()[:3])
        asyncio.run(measure(args, env, key, door.service_pids(dsn, redis_url)))
        print(f"(ran {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
