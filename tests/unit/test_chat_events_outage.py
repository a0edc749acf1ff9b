"""While Redis is away, the chat's event stream says so (Unavailable), never a 500 or a cut."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from lookout import errors
from lookout.chat import events


class RedisAway:
    """Every command fails as it does while redis-server restarts."""

    def __getattr__(self, name: str) -> Any:
        async def command(*args: Any, **kwargs: Any) -> Any:
            raise aioredis.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")

        return command


async def test_reading_the_stream_while_redis_is_away_is_unavailable() -> None:
    redis: Any = RedisAway()
    chat_id = uuid.uuid4()

    for read in (events.last_id(redis, chat_id), events.active_turn(redis, chat_id),
                 events.range_after(redis, chat_id, "0-0")):  # fmt: skip
        with pytest.raises(errors.Unavailable):
            await read


async def test_a_turn_stream_idle_while_redis_is_away_ends_with_an_error_part() -> None:
    async def idle() -> AsyncIterator[Any]:
        yield None

    read = [part async for _, part in events.turn_events(idle(), RedisAway(), uuid.uuid4(), "t")]  # type: ignore[arg-type]

    assert [(p["type"], p["code"]) for p in read] == [("error", "unavailable")]
