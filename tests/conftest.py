"""Shared fixtures: throwaway Postgres and Redis for the session, a fresh database per test."""

from __future__ import annotations

import faulthandler
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
import redis.asyncio as aioredis

from lookout import devservices
from lookout.db import migrate
from lookout.settings import Settings

TEMPLATE = "lookout_template"
PUBLIC_URL = "http://localhost:8000"  # where the test app says it is served (not its real port)
WATCHDOG_MARGIN_S = 180.0
_watchdog_fd = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # The real stderr, kept before output capture swaps it: where the watchdog writes.
    config.stash[_watchdog_fd] = os.dup(sys.__stderr__.fileno())


def _arm_watchdog(item: pytest.Item) -> None:
    marker = item.get_closest_marker("timeout")
    limit = float(marker.args[0] if marker and marker.args else item.config.getini("timeout"))
    faulthandler.dump_traceback_later(
        limit + WATCHDOG_MARGIN_S, exit=True, file=item.config.stash[_watchdog_fd]
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """A test phase (setup, call, teardown) that takes past the test's timeout plus a margin
    ends the run with every thread's stack. pytest-timeout (and pytest's faulthandler) stop
    their timers once a test has failed, so a teardown that then hung (a task swallowing its
    cancellation kept the event loop from closing) ran into CI's own limit with nothing
    printed; the watchdog is armed again at each phase for that reason."""
    _arm_watchdog(item)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    _arm_watchdog(item)
    yield


@pytest.fixture(scope="session")
def backing() -> Iterator[tuple[str, str]]:
    """(postgres server url without database, redis url): configured ones, or private servers."""
    pg_url = os.environ.get("LOOKOUT_TEST_DATABASE_URL")
    redis_url = os.environ.get("LOOKOUT_TEST_REDIS_URL")
    if pg_url and redis_url:
        yield pg_url.rsplit("/", 1)[0], redis_url
        return
    root = Path(tempfile.mkdtemp(prefix="lookout-test-"))
    root.chmod(0o755)  # the postgres user must reach its data directory
    try:
        with devservices.services(root) as (postgres, redis):
            yield postgres.url.rsplit("/", 1)[0], redis.url
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def _admin(server: str) -> asyncpg.Connection:
    return await asyncpg.connect(f"{server}/postgres")


@pytest.fixture(scope="session")
def template_db(backing: tuple[str, str]) -> str:
    """A database migrated once per session, cloned by every test that needs one."""
    import asyncio

    server = backing[0]

    async def build() -> None:
        conn = await _admin(server)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE}" WITH (FORCE)')
            await conn.execute(f'CREATE DATABASE "{TEMPLATE}"')
        finally:
            await conn.close()
        await migrate.migrate(f"{server}/{TEMPLATE}")

    asyncio.run(build())
    return TEMPLATE


@pytest.fixture
async def database_url(backing: tuple[str, str], template_db: str) -> AsyncIterator[str]:
    server = backing[0]
    name = f"test_{uuid.uuid4().hex[:12]}"
    conn = await _admin(server)
    try:
        await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template_db}"')
    finally:
        await conn.close()
    yield f"{server}/{name}"
    conn = await _admin(server)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture
async def redis_url(backing: tuple[str, str]) -> AsyncIterator[str]:
    url = backing[1]
    client = aioredis.Redis.from_url(url)
    await client.flushdb()
    await client.aclose()
    yield url


@pytest.fixture
def settings(database_url: str, redis_url: str) -> Settings:
    return Settings.from_env(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "LOOKOUT_SECRET_KEY": "test-secret-key-" + "x" * 16,
            "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "1",
            "LOOKOUT_DB_POOL_MAX": "20",
            # Browser-like test clients send this Origin; tests of the other sign-up policies
            # say so.
            "LOOKOUT_PUBLIC_URL": PUBLIC_URL,
            "LOOKOUT_SIGNUP": "open",
        }
    )


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    from lookout.db import pool

    async with pool.pool_context(database_url, max_size=5) as conn_pool:
        yield conn_pool
