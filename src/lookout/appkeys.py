"""Typed keys for the shared state of the web application (one place lists them all)."""

from __future__ import annotations

import aiohttp
import asyncpg
import redis.asyncio as aioredis
from aiohttp import web

from lookout.access import keys
from lookout.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
DB = web.AppKey("db", asyncpg.Pool)
REDIS = web.AppKey("redis", aioredis.Redis)
HTTP = web.AppKey("http", aiohttp.ClientSession)

REQUEST_ID = web.RequestKey("request_id", str)
STARTED = web.RequestKey("started", float)
KEY_USAGE = web.AppKey("key_usage", keys.KeyUsage)
