"""Sign-in throttling: Redis counters of attempts per (client address, email) pair and per client
address, in a fixed window. Never per email alone: failures anyone sends for a known address
would lock its owner out everywhere; the right password from an address that did not fail works.

An attempt is counted before the password is checked, in one script, so a burst of parallel
guesses cannot all slip past the limit while argon2 runs; a success gives its attempt back.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from collections.abc import Iterator

import redis.asyncio as aioredis
import redis.exceptions

from lookout import errors, redis_client, redis_keys

WINDOW_S = 15 * 60
PAIR_LIMIT = 5  # one address guessing one email
IP_LIMIT = 20  # one address guessing any emails
_PREFIX = redis_keys.SIGNIN

# KEYS: the counters; ARGV[1]: the window in seconds; ARGV[1 + i]: the limit of KEYS[i].
# Answers 0 when the attempt is counted, else the seconds until the full counter resets.
# The TTL check (rather than "INCR returned 1") also heals a counter that lost its expiry.
_ATTEMPT = redis_client.Script("""
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i + 1]) then
    local ttl = redis.call('TTL', key)
    if ttl < 0 then
      redis.call('EXPIRE', key, ARGV[1])
      ttl = tonumber(ARGV[1])
    end
    return math.max(ttl, 1)
  end
end
for _, key in ipairs(KEYS) do
  redis.call('INCR', key)
  if redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, ARGV[1]) end
end
return 0
""")

# KEYS[1]: the (address, email) counter, cleared; KEYS[2]: the IP counter, which gets this
# attempt back (only if it still exists: DECR on a missing key would create one that never expires).
_SUCCEEDED = redis_client.Script("""
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 0
""")


def counters(*, email: str, ip: str) -> list[str]:
    """The Redis keys for the (IP, email) pair (the email case-insensitive, hashed with the IP:
    no email addresses in Redis) and for the IP."""
    pair = f"{ip}\n{email.strip().lower()}".encode()
    return [f"{_PREFIX}:pair:{hashlib.sha256(pair).hexdigest()}", f"{_PREFIX}:ip:{ip}"]


@contextlib.contextmanager
def _redis_errors() -> Iterator[None]:
    try:
        yield
    except redis.exceptions.RedisError as exc:
        raise errors.Unavailable("Sign-in is unavailable for a moment; retry shortly.") from exc


async def attempt(client: aioredis.Redis, *, email: str, ip: str) -> None:
    """Count a sign-in attempt, or raise RateLimited when this IP used its budget for this email
    or for all emails."""
    with _redis_errors():
        wait = int(await _ATTEMPT(client, keys=counters(email=email, ip=ip), args=_limits()))
    if wait:
        raise errors.RateLimited(
            f"Too many failed sign-ins; try again in {math.ceil(wait / 60)} minute(s).",
            retry_after=wait,
        )


async def succeeded(client: aioredis.Redis, *, email: str, ip: str) -> None:
    """A right password: forget this pair's failures and give the IP its attempt back."""
    with _redis_errors():
        await _SUCCEEDED(client, keys=counters(email=email, ip=ip), args=())


def _limits() -> list[int]:
    return [WINDOW_S, PAIR_LIMIT, IP_LIMIT]


# Sign-ups: accounts made per client address in an hour (LOOKOUT_SIGNUPS_PER_HOUR). Counted
# before the account is made (a parallel burst cannot pass the limit), given back when none was.
SIGNUP_WINDOW_S = 3600
_SIGNUP_PREFIX = redis_keys.SIGNUP_IP

# KEYS[1]: the address's counter, which gets a sign-up back (only if it still exists).
_GIVE_BACK = redis_client.Script("""
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 0
""")


async def signup_attempt(client: aioredis.Redis, *, ip: str, limit: int) -> None:
    """Count a sign-up from `ip`, or raise RateLimited when it made `limit` this hour."""
    with _redis_errors():
        keys = [f"{_SIGNUP_PREFIX}:{ip}"]
        wait = int(await _ATTEMPT(client, keys=keys, args=[SIGNUP_WINDOW_S, limit]))
    if wait:
        raise errors.RateLimited(
            f"Too many sign-ups from this address; try again in {math.ceil(wait / 60)} minute(s).",
            retry_after=wait,
        )


async def signup_failed(client: aioredis.Redis, *, ip: str) -> None:
    """No account was made: the address gets its sign-up back."""
    with _redis_errors():
        await _GIVE_BACK(client, keys=[f"{_SIGNUP_PREFIX}:{ip}"], args=())
