"""The shared resources a door hands to the adapter (web app and worker build their own;
the web app's from its state: lookout.appkeys.services)."""

from __future__ import annotations

import dataclasses

import aiohttp
import asyncpg
import redis.asyncio as aioredis

from lookout.capabilities import browser as browser_pool
from lookout.settings import Settings


@dataclasses.dataclass(frozen=True)
class Services:
    db: asyncpg.Pool
    redis: aioredis.Redis
    http: aiohttp.ClientSession
    settings: Settings
    # Workers only: the web process never renders (a call that needs it runs as a job).
    browser: browser_pool.Pool | None = None
