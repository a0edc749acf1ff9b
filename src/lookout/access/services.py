"""The shared resources a door hands to the adapter (web app and worker build their own;
the web app's from its state: lookout.appkeys.services)."""

from __future__ import annotations

import dataclasses

import aiohttp
import asyncpg
import redis.asyncio as aioredis

from lookout.settings import Settings


@dataclasses.dataclass(frozen=True)
class Services:
    db: asyncpg.Pool
    redis: aioredis.Redis
    http: aiohttp.ClientSession
    settings: Settings
