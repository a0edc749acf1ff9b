from __future__ import annotations

import asyncio
import json
import uuid

import redis.asyncio as aioredis

from lookout import broker
from lookout.actors import maintenance
from lookout.settings import Settings
from tests.integration import workers


async def _wait_for_outcomes(
    client: aioredis.Redis, ids: list[str], seconds: float
) -> dict[str, dict[str, bool]]:
    outcomes: dict[str, dict[str, bool]] = {}
    deadline = asyncio.get_running_loop().time() + seconds
    while len(outcomes) < len(ids) and asyncio.get_running_loop().time() < deadline:
        for probe_id in ids:
            raw = await client.get(maintenance.probe_key(probe_id))
            if raw is not None:
                outcomes[probe_id] = json.loads(raw)
        await asyncio.sleep(0.2)
    return outcomes


async def test_worker_uses_its_own_pools_for_concurrent_messages(settings: Settings) -> None:
    # Given a real worker with one process and four threads sharing one event loop
    broker.setup(settings)
    ids = [str(uuid.uuid4()) for _ in range(24)]
    client = aioredis.Redis.from_url(settings.redis_url)
    with workers.running_worker(settings, processes=1, threads=4) as log:
        # When more probes arrive than there are threads
        for probe_id in ids:
            maintenance.probe.send(probe_id)
        outcomes = await _wait_for_outcomes(client, ids, seconds=60)
    await client.aclose()

    # Then every probe reached Postgres and the checkpointer, with no cross-loop or pool errors
    output = log.read_text(errors="replace")
    assert len(outcomes) == len(ids), output[-3000:]
    assert all(o == {"database": True, "checkpointer": True} for o in outcomes.values())
    assert "attached to a different loop" not in output
    assert "PoolTimeout" not in output
    assert "worker resources open on uvloop." in output  # LOOKOUT_EVENT_LOOP's default
