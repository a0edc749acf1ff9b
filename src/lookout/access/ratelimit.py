"""Per-principal rate limits: an exact sliding window kept in Redis by one atomic script."""

from __future__ import annotations

import dataclasses
import math
import uuid

import redis.asyncio as aioredis

from lookout import errors, redis_client, redis_keys

WINDOW_MS = 60_000

# Sliding-window log: one sorted-set member per admitted request, scored by Redis' own clock so
# every web process agrees. Returns {admitted, remaining, retry_after_ms, reset_ms}.
# KEYS[2], when given, is an API key's revocation marker: set, the key is refused (uncounted).
_SCRIPT = redis_client.Script("""
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then return {-1, 0, 0, 0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - window)
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, limit - count - 1, 0, reset}
end
return {0, 0, reset, reset}
""")


@dataclasses.dataclass(frozen=True)
class Decision:
    admitted: bool
    revoked: bool
    limit: int
    remaining: int
    retry_after_s: int
    reset_s: int

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_s),
        }


async def hit(
    client: aioredis.Redis, *, subject: str, limit: int, revoked_marker: str | None = None
) -> Decision:
    """Count one request for `subject`; the decision says whether it is admitted (and whether
    `revoked_marker` was set, in which case nothing is counted)."""
    # EVALSHA first: the script body crosses the wire only when Redis does not know it yet.
    keys = [redis_keys.rate_limit(subject)] + ([revoked_marker] if revoked_marker else [])
    admitted, remaining, retry_ms, reset_ms = await _SCRIPT(
        client, keys=keys, args=[WINDOW_MS, limit, uuid.uuid4().hex]
    )
    return Decision(
        admitted=int(admitted) == 1,
        revoked=int(admitted) == -1,
        limit=limit,
        remaining=int(remaining),
        retry_after_s=max(1, math.ceil(int(retry_ms) / 1000)),
        reset_s=max(0, math.ceil(int(reset_ms) / 1000)),
    )


async def enforce(
    client: aioredis.Redis, *, subject: str, limit: int, revoked_marker: str | None = None
) -> Decision:
    """Admit the request, or raise RateLimited with the seconds to wait (Unauthenticated when
    `revoked_marker` is set)."""
    try:
        decision = await hit(client, subject=subject, limit=limit, revoked_marker=revoked_marker)
    except redis_client.UNREACHABLE as exc:
        raise errors.Unavailable("The rate limiter is unavailable; retry shortly.") from exc
    if decision.revoked:
        raise errors.Unauthenticated("This API key is not valid or has been revoked.")
    if not decision.admitted:
        raise errors.RateLimited(
            f"Rate limit of {limit} requests per minute reached; retry in "
            f"{decision.retry_after_s} s.",
            retry_after=decision.retry_after_s,
            limit=limit,
        )
    return decision
