"""Reliability tests. Fault tests get their OWN Postgres and Redis (they stop and restart them),
started once per session with lookout.devservices, and a fresh database per test.

Fixtures for the hostile-input and load tests live in hostile_fixtures.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
import redis.asyncio as aioredis

from lookout.access import accounts
from lookout.db import pool
from lookout.settings import Settings
from tests.integration import workers
from tests.reliability import faults_stack

if Path(__file__).with_name("hostile_fixtures.py").exists():  # the other half of the suite
    from tests.reliability.hostile_fixtures import *  # noqa: F403

FAULT_TEMPLATE = "faults_template"


@dataclasses.dataclass
class FaultCluster:
    postgres: faults_stack.Postgres
    redis: faults_stack.Redis

    def url(self, database: str) -> str:
        return f"{self.postgres.server_url}/{database}"


@pytest.fixture(scope="session")
def fault_cluster() -> Iterator[FaultCluster]:
    """Postgres + Redis that only fault tests use; a template database migrated by the real
    `lookout migrate` (the Procfile's release step)."""
    root = Path(tempfile.mkdtemp(prefix="lookout-faults-"))
    root.chmod(0o755)  # the postgres user must reach its data directory
    postgres = faults_stack.Postgres(root / "pg")
    try:
        redis = faults_stack.Redis(root / "redis")
        cluster = FaultCluster(postgres, redis)
        try:
            asyncio.run(_admin(cluster, f'CREATE DATABASE "{FAULT_TEMPLATE}"'))
            env = {**workers.env_for(_settings(cluster.url(FAULT_TEMPLATE), redis.url))}
            subprocess.run([sys.executable, "-m", "lookout.cli", "migrate"], env=env, check=True,
                           capture_output=True, cwd=faults_stack.REPO)  # fmt: skip
            yield cluster
        finally:
            redis.ensure_running()
            redis.stop()
    finally:
        postgres.ensure_running()
        postgres.stop()


def _settings(database_url: str, redis_url: str) -> Settings:
    return Settings.from_env(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "LOOKOUT_SECRET_KEY": "fault-secret-key-" + "x" * 16,
            "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "1",
            "LOOKOUT_PUBLIC_URL": "http://lookout.test",
            "LOOKOUT_SIGNUP": "open",
        }
    )


async def _admin(cluster: FaultCluster, statement: str) -> None:
    conn = await asyncpg.connect(cluster.url("postgres"))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@dataclasses.dataclass
class FaultStack:
    """One test's view: its database on the fault cluster, settings, processes, a pool."""

    cluster: FaultCluster
    settings: Settings
    procs: faults_stack.Processes
    db: asyncpg.Pool

    @property
    def env(self) -> dict[str, str]:
        return self.procs.env

    async def tenant(
        self, *, credits: int, keys: int = 1, rate_limit: int = 100_000
    ) -> tuple[uuid.UUID, uuid.UUID, list[str]]:
        """(user id, workspace id, API key texts) of a new owner with `credits`."""
        email = f"fault-{uuid.uuid4().hex[:8]}@example.com"
        user = await accounts.create_user(self.db, email=email, password="correct horse battery")
        workspace = await accounts.create_workspace(
            self.db, name="Faults", owner_id=user.id, credits=credits
        )
        texts = [
            (await accounts.create_key(
                self.db, workspace_id=workspace.id, name=f"key {n}", created_by=user.id,
                rate_limit_per_minute=rate_limit,
            )).text
            for n in range(keys)
        ]  # fmt: skip
        return user.id, workspace.id, texts


@pytest.fixture
async def fault_stack(fault_cluster: FaultCluster) -> AsyncIterator[FaultStack]:
    name = f"fault_{uuid.uuid4().hex[:12]}"
    await _admin(fault_cluster, f'CREATE DATABASE "{name}" TEMPLATE "{FAULT_TEMPLATE}"')
    redis = aioredis.Redis.from_url(fault_cluster.redis.url)
    await redis.flushdb()
    await redis.aclose()
    settings = _settings(fault_cluster.url(name), fault_cluster.redis.url)
    procs = faults_stack.Processes(workers.env_for(settings))
    db = await pool.create_pool(settings.database_url, max_size=10)
    try:
        yield FaultStack(fault_cluster, settings, procs, db)
    finally:
        await asyncio.to_thread(procs.stop_all)
        fault_cluster.postgres.ensure_running()
        fault_cluster.redis.ensure_running()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(db.close(), 10)
        await _admin(fault_cluster, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
