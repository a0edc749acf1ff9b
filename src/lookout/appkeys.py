"""Typed keys for the shared state of the web application (one place lists them all)."""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

import aiohttp
import asyncpg
import redis.asyncio as aioredis
from aiohttp import web

from lookout.access import keys, principals
from lookout.access.services import Services
from lookout.chat import hub
from lookout.settings import Settings

if TYPE_CHECKING:  # the key names its type; a process reading SETTINGS does not load the agent
    from lookout.agent import graph

SETTINGS = web.AppKey("settings", Settings)
DB = web.AppKey("db", asyncpg.Pool)
REDIS = web.AppKey("redis", aioredis.Redis)
HTTP = web.AppKey("http", aiohttp.ClientSession)

REQUEST_ID = web.RequestKey("request_id", str)
STARTED = web.RequestKey("started", float)
VERB = web.RequestKey("verb", str)  # the verb a /v1 route runs: its errors' meta.verb
KEY_USAGE = web.AppKey("key_usage", keys.KeyUsage)
KEY_CACHE = web.AppKey("key_cache", keys.KeyCache[principals.Principal])
HUB = web.AppKey("hub", hub.Hub)
AGENT: web.AppKey[graph.OnDemand] = web.AppKey("agent")  # the saver and graph, at first use
# Turns run as tasks independent of their HTTP request; shutdown waits for them.
TURNS = web.AppKey("turns", set[asyncio.Task[object]])
STREAMS = web.AppKey("streams", weakref.WeakSet[web.StreamResponse])


def services(app: web.Application) -> Services:
    """The shared resources of the web app, as the adapter takes them."""
    return Services(db=app[DB], redis=app[REDIS], http=app[HTTP], settings=app[SETTINGS])
