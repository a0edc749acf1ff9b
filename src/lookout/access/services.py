"""The shared resources a door hands to the adapter (web app and worker build their own)."""

from __future__ import annotations

import dataclasses

import aiohttp
import asyncpg
import redis.asyncio as aioredis
from aiohttp import web

from lookout import appkeys
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

    @classmethod
    def of_app(cls, app: web.Application) -> Services:
        return cls(
            db=app[appkeys.DB],
            redis=app[appkeys.REDIS],
            http=app[appkeys.HTTP],
            settings=app[appkeys.SETTINGS],
        )
