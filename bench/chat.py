"""Benchmark: the chat machinery against the same verb through the REST door, and SSE fan-out.

    .venv/bin/python bench/chat.py [--turns 40] [--listeners 200]

1. A rule-planner turn on a tiny local page ("summarize URL"): time to the first SSE event and to
   `finish`, against POST /v1/web/scrape of the same page in the same run. Prints p50s and the
   chat overhead (finish p50 - REST p50). Target: the chat machinery adds < 30 ms at p50.
2. N idle GET /events listeners on one web process; one turn runs; each listener's delay per
   event = its receipt time - the event's Redis stream id time (same clock). Prints p50/p99.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import door
import services

OVERHEAD_TARGET_MS = 30.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def sse_events(response: aiohttp.ClientResponse) -> Any:
    """(id, data) of each SSE event of a streaming response."""
    event_id, data = "", []
    async for raw in response.content:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield event_id, "\n".join(data)
            event_id, data = "", []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


async def one_turn(
    session: aiohttp.ClientSession, base: str, headers: dict[str, str], url: str
) -> tuple[float, float]:
    async with session.post(f"{base}/api/chats", json={}, headers=headers) as response:
        chat_id = (await response.json())["data"]["id"]
    start = time.perf_counter()
    first = finish = 0.0
    async with session.post(
        f"{base}/api/chats/{chat_id}/messages", json={"text": f"summarize {url}"}, headers=headers
    ) as response:
        async for _, data in sse_events(response):
            now = time.perf_counter() - start
            first = first or now
            if data != "[DONE]" and json.loads(data)["type"] == "finish":
                finish = now
            if data == "[DONE]":
                break
    return first * 1000, finish * 1000


async def one_rest(
    session: aiohttp.ClientSession, base: str, headers: dict[str, str], url: str
) -> float:
    start = time.perf_counter()
    async with session.post(f"{base}/v1/web/scrape", json={"url": url}, headers=headers) as r:
        await r.read()
        assert r.status == 200, r.status
    return (time.perf_counter() - start) * 1000


async def latency(base: str, key: str, url: str, turns: int) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {key}"}
    firsts, finishes, rests = [], [], []
    async with aiohttp.ClientSession() as session:
        for _ in range(3):  # warm-up
            await one_rest(session, base, headers, url)
            await one_turn(session, base, headers, url)
        for _ in range(turns):
            rests.append(await one_rest(session, base, headers, url))
            first, finish = await one_turn(session, base, headers, url)
            firsts.append(first)
            finishes.append(finish)
    return {
        "rest_p50_ms": statistics.median(rests),
        "first_event_p50_ms": statistics.median(firsts),
        "finish_p50_ms": statistics.median(finishes),
    }


async def fan_out(base: str, key: str, url: str, listeners: int) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {key}"}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.post(f"{base}/api/chats", json={}, headers=headers) as response:
            chat_id = (await response.json())["data"]["id"]
        delays: list[float] = []

        async def listen() -> None:
            async with session.get(f"{base}/api/chats/{chat_id}/events", headers=headers) as resp:
                async for event_id, data in sse_events(resp):
                    delays.append(time.time() * 1000 - int(event_id.split("-")[0]))
                    if json.loads(data)["type"] == "finish":
                        return

        tasks = [asyncio.create_task(listen()) for _ in range(listeners)]
        await asyncio.sleep(2.0)  # every listener connected and idle
        await one_turn_on(session, base, headers, chat_id, url)
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
    return {
        "listeners": listeners,
        "events": len(delays),
        "delay_p50_ms": pct(delays, 0.5),
        "delay_p99_ms": pct(delays, 0.99),
    }


async def one_turn_on(
    session: aiohttp.ClientSession, base: str, headers: dict[str, str], chat_id: str, url: str
) -> None:
    async with session.post(
        f"{base}/api/chats/{chat_id}/messages", json={"text": f"summarize {url}"}, headers=headers
    ) as response:
        async for _, data in sse_events(response):
            if data == "[DONE]":
                return


async def measure(args: argparse.Namespace, env: dict[str, str], key: str) -> dict[str, Any]:
    page_port, web_port = door.free_port(), door.free_port()
    processes = [door.spawn("page", page_port, env), door.spawn("door", web_port, env)]
    try:
        await door.wait_up(f"http://127.0.0.1:{page_port}/tiny")
        await door.wait_up(f"http://127.0.0.1:{web_port}/healthz")
        base, url = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{page_port}/tiny"
        return {
            "latency": await latency(base, key, url, args.turns),
            "fan_out": await fan_out(base, key, url, args.listeners),
        }
    finally:
        for process in processes:
            process.terminate()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--listeners", type=int, default=200)
    args = parser.parse_args()
    with services.backing() as (dsn, redis_url):
        env = services.server_env(dsn, redis_url)
        key = asyncio.run(door.seed(dsn))
        results = asyncio.run(measure(args, env, key))
    lat, fan = results["latency"], results["fan_out"]
    overhead = lat["finish_p50_ms"] - lat["rest_p50_ms"]
    print(json.dumps(results))
    print(
        f"REST p50 {lat['rest_p50_ms']:.1f} ms; chat first event p50 "
        f"{lat['first_event_p50_ms']:.1f} ms, finish p50 {lat['finish_p50_ms']:.1f} ms"
    )
    print(
        f"ratio chat finish / REST = {lat['finish_p50_ms'] / lat['rest_p50_ms']:.2f}; "
        f"overhead {overhead:.1f} ms (target < {OVERHEAD_TARGET_MS:.0f} ms: "
        f"{'met' if overhead < OVERHEAD_TARGET_MS else 'MISSED'})"
    )
    print(
        f"{fan['listeners']} /events listeners, {fan['events']} deliveries: delay p50 "
        f"{fan['delay_p50_ms']:.1f} ms, p99 {fan['delay_p99_ms']:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
