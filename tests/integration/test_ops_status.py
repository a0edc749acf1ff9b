"""`lookout admin status`: a cron health check that names what is late."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import asyncpg
import redis.asyncio as aioredis

from lookout import broker
from lookout.actors import maintenance
from lookout.settings import Settings
from tests.integration import workers
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_watches import make_due, make_watch, manual_run, page
from tests.reliability import faults_watches

__all__ = ["page", "tenant_factory"]


async def admin_status(settings: Settings, *extra: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lookout.cli", "admin", "status", *extra,
        env=workers.env_for(settings), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


async def test_a_quiet_deployment_is_ok(settings: Settings) -> None:
    code, out = await admin_status(settings)

    assert code == 0, out
    assert "ok: nothing is late" in out
    assert "watches: 0 due, 0 overdue" in out


async def test_a_stuck_run_an_overdue_watch_and_a_waiting_queue_exit_non_zero(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, page: dict[str, Any]
) -> None:
    # Given a run whose worker died an hour ago, a watch due for an hour, and a message waiting
    tenant = await tenant_factory()
    # (yearly: an hourly watch crossing hh:00 within the test would be due too)
    stuck = await make_watch(db, settings, tenant, page["url"], cron=faults_watches.YEARLY)
    run_id = await manual_run(db, stuck)
    await db.execute(
        "UPDATE automation_runs SET status = 'running', started_at = now() - interval '2 hours',"
        " lease_until = now() - interval '1 hour' WHERE id = $1",
        run_id,
    )
    late = await make_watch(db, settings, tenant, page["url"], cron=faults_watches.YEARLY)
    await make_due(db, late.id, ago="1 hour")
    broker.setup(settings)
    await asyncio.to_thread(maintenance.probe.send, "00000000-0000-0000-0000-000000000000")
    redis = aioredis.Redis.from_url(settings.redis_url)
    await redis.hset(  # type: ignore[misc]
        "dramatiq:default.msgs",
        (await redis.lindex("dramatiq:default", 0)).decode(),  # type: ignore[misc]
        json.dumps({"message_timestamp": 0}),
    )
    await redis.aclose()

    # When the health check runs
    code, out = await admin_status(settings, "--json")
    text_code, text = await admin_status(settings, "--max-overdue", "7200")

    # Then it fails, naming the stuck run, the overdue watch and the old message
    assert code == 1, out
    report = json.loads(out)
    assert report["ok"] is False
    assert [run["id"] for run in report["stuck_runs"]] == [str(run_id)]
    assert report["stuck_runs"][0]["past_lease_s"] >= 3500
    assert report["watches"]["overdue"] == 1
    default = next(q for q in report["queues"] if q["name"] == "default")
    assert default["ready"] == 1 and default["oldest_age_s"] > 3600
    assert any("stuck" in p for p in report["problems"])
    assert any("overdue" in p for p in report["problems"])
    # And a threshold above those delays lists them but only the ancient message fails it
    assert text_code == 1 and f"run {run_id} of watch {stuck.id}" in text
    assert "1 due, 0 overdue (> 7200 s)" in text
    assert "queue default: oldest message waited" in text
