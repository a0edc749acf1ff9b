"""GET /metrics: Prometheus text format, behind a token or on a private port.

LOOKOUT_METRICS_TOKEN set: /metrics on the public port answers `Authorization: Bearer <token>`.
LOOKOUT_METRICS_PORT set: /metrics is also served, without a token, on LOOKOUT_METRICS_HOST
(127.0.0.1 unless told otherwise). Neither: /metrics is not found.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import AsyncIterator

import dramatiq
from aiohttp import web
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from lookout import appkeys, errors
from lookout.ops import metrics, multiproc, status

logger = logging.getLogger(__name__)

PATH = "/metrics"
_CHECK_TIMEOUT_S = 2.0
MAIN_APP = web.AppKey("main_app", web.Application)


def setup(app: web.Application) -> None:
    settings = app[appkeys.SETTINGS]
    if settings.metrics_token:
        app.router.add_get(PATH, protected)
    if settings.metrics_port:
        app.cleanup_ctx.append(_private_site)


async def protected(request: web.Request) -> web.Response:
    expected = f"Bearer {request.app[appkeys.SETTINGS].metrics_token}"
    given = request.headers.get("Authorization", "")
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise errors.Unauthenticated("Send the metrics token: Authorization: Bearer <token>.")
    return await _answer(request.app)


async def _open(request: web.Request) -> web.Response:
    return await _answer(request.app[MAIN_APP])


async def _answer(app: web.Application) -> web.Response:
    settings = app[appkeys.SETTINGS]
    live = await live_metrics(app)
    directory = multiproc.directory(settings) if settings.metrics_dir else None
    body = await asyncio.to_thread(metrics.exposition, directory, live)
    return web.Response(body=body, headers={"Content-Type": metrics.CONTENT_TYPE})


async def _private_site(app: web.Application) -> AsyncIterator[None]:
    settings = app[appkeys.SETTINGS]
    private = web.Application()
    private[MAIN_APP] = app
    private.router.add_get(PATH, _open)
    runner = web.AppRunner(private, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, settings.metrics_host, settings.metrics_port).start()
    yield
    await runner.cleanup()


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


async def live_metrics(app: web.Application) -> list[Metric]:
    """What is true right now, read at scrape time: backing services, pool, backlog, queues."""
    db, redis = app[appkeys.DB], app[appkeys.REDIS]
    found: list[Metric] = [
        _gauge("lookout_db_pool_size", "Connections open in this process's pool.", db.get_size()),
        _gauge("lookout_db_pool_idle", "Idle connections in this process's pool.",
               db.get_idle_size()),
        _gauge("lookout_db_pool_max", "Most connections this process's pool opens.",
               db.get_max_size()),
    ]  # fmt: skip
    checks = await asyncio.gather(
        asyncio.wait_for(status.ping_database(db), _CHECK_TIMEOUT_S),
        asyncio.wait_for(redis.ping(), _CHECK_TIMEOUT_S),
        return_exceptions=True,
    )
    postgres_up, redis_up = (not isinstance(result, BaseException) for result in checks)
    found.append(_gauge("lookout_postgres_up", "1 when Postgres answered.", postgres_up))
    found.append(_gauge("lookout_redis_up", "1 when Redis answered.", redis_up))
    if postgres_up and redis_up:
        found.extend(await _backlog(app))
    return found


async def _backlog(app: web.Application) -> list[Metric]:
    max_overdue_s = app[appkeys.SETTINGS].status_max_overdue_s
    queues = status.queue_names(dramatiq.get_broker())
    try:
        now = await asyncio.wait_for(
            status.snapshot(app[appkeys.DB], app[appkeys.REDIS], queues,
                            max_overdue_s=max_overdue_s),
            _CHECK_TIMEOUT_S,
        )  # fmt: skip
    except (TimeoutError, errors.LookoutError, OSError) as exc:
        logger.warning("metrics: backlog unavailable (%s)", type(exc).__name__)
        return []
    return _status_families(now)


def _status_families(now: status.Status) -> list[Metric]:
    watches = now.watches
    runs = GaugeMetricFamily("lookout_watch_runs_last_hour", "Watch runs created in the last "
                             "hour, by status.", labels=["status"])  # fmt: skip
    for name, count in now.runs_last_hour.items():
        runs.add_metric([name], count)
    jobs = GaugeMetricFamily(
        "lookout_jobs", "Jobs queued or running, and finished in the last hour.", labels=["status"]
    )
    for name, count in now.jobs.items():
        jobs.add_metric([name], count)
    return [
        _gauge("lookout_watches_due", "Enabled watches due now.", watches.due),
        _gauge("lookout_watches_overdue", "Watches due longer than the status threshold.",
               watches.overdue),
        _gauge("lookout_watch_oldest_due_seconds", "How late the most overdue watch is.",
               watches.oldest_due_s or 0.0),
        _gauge("lookout_watch_runs_stuck", "Runs running past their lease.", len(now.stuck_runs)),
        runs, jobs, *_queue_families(now.queues),
    ]  # fmt: skip


def _queue_families(queues: list[status.Queue]) -> list[Metric]:
    ready = GaugeMetricFamily("lookout_queue_messages", "Messages waiting in a Dramatiq queue.",
                              labels=["queue", "state"])  # fmt: skip
    oldest = GaugeMetricFamily(
        "lookout_queue_oldest_message_age_seconds",
        "Age of the message at the head of a queue.",
        labels=["queue"],
    )
    for queue in queues:
        ready.add_metric([queue.name, "ready"], queue.ready)
        ready.add_metric([queue.name, "delayed"], queue.delayed)
        ready.add_metric([queue.name, "dead"], queue.dead)
        oldest.add_metric([queue.name], queue.oldest_age_s or 0.0)
    return [ready, oldest]
