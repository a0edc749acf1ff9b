"""Keep a lease alive while a block runs: call `beat` every `interval` seconds until it ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from lookout import errors


@contextlib.asynccontextmanager
async def beating(interval: float, beat: Callable[[], Awaitable[object]]) -> AsyncIterator[None]:
    async def loop() -> None:
        while True:
            await asyncio.sleep(interval)
            # A missed beat is not fatal: the lease is three beats long.
            with contextlib.suppress(errors.Unavailable):
                await beat()

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
