"""The tools each connector's server listed, kept in Redis for five minutes (shared by every
process), so an agent turn does not ask every server again; a failure is kept for one minute."""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

import redis.asyncio as aioredis

from lookout import redis_keys

TTL_S = 300
FAILURE_TTL_S = 60


@dataclasses.dataclass(frozen=True)
class Listing:
    tools: list[dict[str, Any]]
    error: str | None = None


def _key(connector_id: uuid.UUID) -> str:
    return redis_keys.mcp_tools(connector_id)


async def get(redis: aioredis.Redis, connector_id: uuid.UUID) -> Listing | None:
    raw = await redis.get(_key(connector_id))
    if raw is None:
        return None
    data = json.loads(raw)
    return Listing(tools=data["tools"], error=data["error"])


async def put(redis: aioredis.Redis, connector_id: uuid.UUID, listing: Listing) -> None:
    ttl = FAILURE_TTL_S if listing.error else TTL_S
    payload = json.dumps({"tools": listing.tools, "error": listing.error})
    await redis.set(_key(connector_id), payload, ex=ttl)


async def forget(redis: aioredis.Redis, connector_id: uuid.UUID) -> None:
    await redis.delete(_key(connector_id))
