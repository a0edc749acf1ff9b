"""The shared pacer (capabilities/providers/limiter.Shared) on a real Redis: one pace for every
process, a queue bounded by max_wait, and a clear error when Redis is down."""

from __future__ import annotations

import asyncio
import itertools
import sys

import pytest
import redis.asyncio as aioredis
from aiohttp.test_utils import unused_port

from lookout import errors
from lookout.capabilities.providers import limiter

INTERVAL_S = 0.4
# Each process takes 3 slots and prints when each came.
_PROCESS = """
import asyncio, sys, time
import redis.asyncio as aioredis
from lookout.capabilities.providers import limiter

async def main() -> None:
    client = aioredis.Redis.from_url(sys.argv[1])
    pace = limiter.Shared("test", float(sys.argv[2]), provider="Test", max_wait=30)
    for _ in range(3):
        await pace.wait(client)
        print(time.time(), flush=True)
    await client.aclose()

asyncio.run(main())
"""


async def test_processes_are_paced_together(redis_url: str) -> None:
    async def run() -> list[float]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _PROCESS, redis_url, str(INTERVAL_S),
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await process.communicate()
        assert process.returncode == 0
        return [float(line) for line in out.split()]

    times = sorted(itertools.chain(*await asyncio.gather(run(), run())))

    # Six slots one interval apart; each process alone would have taken its first at once.
    # Half an interval of slack: a process may wake late for its slot.
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(times) == 6
    assert min(gaps) >= INTERVAL_S / 2, gaps
    assert times[-1] - times[0] >= 5 * INTERVAL_S - INTERVAL_S / 2


async def test_a_caller_past_max_wait_is_refused_and_takes_no_slot(redis_url: str) -> None:
    pace = limiter.Shared("test", 10.0, provider="Test", max_wait=15.0)
    one, other = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
    try:
        first, second = await pace.reserve(one), await pace.reserve(other)
        refusals = []
        for client in (one, other):
            with pytest.raises(errors.RateLimited) as refused:
                await pace.reserve(client)
            refusals.append(refused.value)
    finally:
        await one.aclose()
        await other.aclose()

    # (the seconds between the calls, up to one, are the leeway: a loaded machine is slow)
    assert first == 0 and 9.0 <= second <= 10.0
    # The third slot would be 20 s away: retry once 15 s of waiting would do, in 5 s. The
    # fourth caller is told the same: the refused third took nothing.
    assert [refusal.retry_after for refusal in refusals] in ([5, 5], [4, 4], [5, 4])
    assert "one request every 10 s" in refusals[0].message


async def test_redis_down_is_unavailable() -> None:
    client = aioredis.Redis.from_url(f"redis://127.0.0.1:{unused_port()}")
    pace = limiter.Shared("test", 1.0, provider="Test", max_wait=30)

    with pytest.raises(errors.Unavailable, match="pacer of our requests to Test"):
        await pace.wait(client)
    await client.aclose()
