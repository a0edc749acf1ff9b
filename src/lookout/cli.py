"""The `lookout` command: migrate, web, worker, scheduler, dev, admin, route."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from lookout import crash, errors, logs
from lookout.ops import multiproc
from lookout.settings import Settings


def _settings() -> Settings:
    return Settings.from_env()


def cmd_migrate(args: argparse.Namespace) -> int:
    from lookout.db import migrate

    applied = asyncio.run(migrate.migrate(_settings().database_url))
    print(f"applied {len(applied)} migration(s)" + (f": {', '.join(applied)}" if applied else ""))
    return 0


def cmd_web(args: argparse.Namespace, *, with_worker: bool = False) -> int:
    from lookout import loops

    loops.hold_collector()  # until the app is open (create_app's freeze_heap)
    from aiohttp import web

    from lookout import app

    settings = _settings()
    if with_worker:
        settings = dataclasses.replace(
            settings, worker_threads=worker_size(settings, processes=1)[1]
        )
    multiproc.prepare(settings)  # before prometheus_client is imported
    logs.configure(settings.log_format, settings.log_level)
    loops.install(settings)
    application = app.create_app(settings, freeze_heap=True, runs_actors=with_worker)
    if with_worker:
        from lookout import together

        together.add_worker(application, settings.worker_threads)
    web.run_app(application, host=settings.host, port=settings.port, print=None)
    return 0


def cmd_dev_serve(args: argparse.Namespace) -> int:
    return cmd_web(args, with_worker=True)


def _bin(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


def cmd_worker(args: argparse.Namespace) -> int:
    settings = _settings()
    processes, threads = worker_size(settings)
    processes, threads = args.processes or processes, args.threads or threads
    # Each process sizes its database pools to its threads (actors.runtime): it reads them here.
    os.environ["LOOKOUT_WORKER_THREADS"] = str(threads)
    argv = [_bin("dramatiq"), "lookout.worker", "--processes", str(processes)]
    argv += ["--threads", str(threads)]
    multiproc.prepare(settings)  # the worker processes inherit the metrics directory
    # A backstop only: GracefulStop interrupts what still runs when the grace period ends.
    argv += ["--worker-shutdown-timeout", str(int((settings.shutdown_grace_s + 10) * 1000))]
    os.execv(argv[0], argv)


THREADS_PER_CORE = 8


def worker_size(
    settings: Settings, cores: int | None = None, *, processes: int | None = None
) -> tuple[int, int]:
    """`lookout worker`'s processes and threads a process: the settings', or where 0, a process
    per core and 8 messages in flight a core across them, at least 8 a process and at most its
    database connections (a message past those would only wait for one). `cores`, `processes`:
    this machine's and the settings', unless given."""
    cores = cores or machine_cores()
    processes = processes or settings.worker_processes or cores
    threads = settings.worker_threads or min(
        settings.db_pool_max, max(THREADS_PER_CORE, THREADS_PER_CORE * cores // processes)
    )
    return processes, threads


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity: a container's or taskset's limit)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cmd_scheduler(args: argparse.Namespace) -> int:
    from lookout import scheduler

    return scheduler.run(_settings())


def cmd_metrics(args: argparse.Namespace) -> int:
    settings = _settings()
    multiproc.prepare(settings)
    from lookout.ops import metrics

    metrics.serve(settings.metrics_host, args.port or settings.metrics_port or 9100)
    return 0


def cmd_dev(args: argparse.Namespace) -> int:
    from lookout import dev

    return dev.run(port=args.port)


def cmd_dev_setup(args: argparse.Namespace) -> int:
    from lookout import devsetup

    print(asyncio.run(devsetup.prepare(_settings().database_url)), flush=True)
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    from lookout.agent import route_cli

    return route_cli.main(args.text)


def _run_db(work: Callable[[Any], Awaitable[int]]) -> int:
    from lookout.db import pool

    async def main() -> int:
        async with pool.pool_context(_settings().database_url, max_size=2) as db:
            return await work(db)

    return asyncio.run(main())


def cmd_admin(args: argparse.Namespace) -> int:
    from lookout.access import accounts
    from lookout.db import repo

    async def create_user(db: Any) -> int:
        user = await accounts.create_user(db, email=args.email, password=args.password)
        print(user.id)
        return 0

    async def create_workspace(db: Any) -> int:
        owner = await repo.get_user_by_email(db, email=args.owner)
        if owner is None:
            raise errors.NotFound(f"no user with email {args.owner}")
        print((await accounts.create_workspace(db, name=args.name, owner_id=owner.id)).id)
        return 0

    async def grant_credits(db: Any) -> int:
        workspace_id = _uuid(args.workspace_id, "workspace id")
        print(await accounts.grant(db, workspace_id=workspace_id, amount=args.amount))
        return 0

    async def create_key(db: Any) -> int:
        workspace_id = _uuid(args.workspace_id, "workspace id")
        new = await accounts.create_key(
            db, workspace_id=workspace_id, name=args.name, scope=args.scope
        )
        print(new.text)
        return 0

    async def dispatch_now(db: Any) -> int:
        from lookout import broker
        from lookout.actors import watches as watch_actors
        from lookout.watches import dispatch

        broker.setup(_settings())
        run_ids = await dispatch.dispatch(db, watch_actors.send_all)
        print(f"enqueued {len(run_ids)} watch run(s)")
        return 0

    async def status(db: Any) -> int:
        from lookout import broker
        from lookout.ops import status as ops_status

        settings = _settings()
        max_overdue = args.max_overdue
        if max_overdue is None:
            max_overdue = settings.status_max_overdue_s
        queues = ops_status.queue_names(broker.setup(settings))
        return await ops_status.report(
            db, settings, queues, max_overdue_s=max_overdue, as_json=args.json
        )

    actions = {
        "dispatch": dispatch_now,
        "status": status,
        "create-user": create_user,
        "create-workspace": create_workspace,
        "grant-credits": grant_credits,
        "create-key": create_key,
    }
    return _run_db(actions[args.action])


def _uuid(text: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise errors.InvalidInput(f"{text!r} is not a valid {what}") from None


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="lookout", description=__doc__)
    top.add_argument(
        "-v", "--verbose", action="store_true", help="print the traceback of an unexpected error"
    )
    sub = top.add_subparsers(dest="command", required=True)
    sub.add_parser("migrate", help="apply database migrations").set_defaults(func=cmd_migrate)
    sub.add_parser("web", help="run the web process on $PORT").set_defaults(func=cmd_web)
    worker = sub.add_parser("worker", help="run Dramatiq workers")
    worker.add_argument("--processes", type=int)
    worker.add_argument("--threads", type=int)
    worker.set_defaults(func=cmd_worker)
    scheduler = sub.add_parser("scheduler", help="send the periodic ticks (one per deployment)")
    scheduler.set_defaults(func=cmd_scheduler)
    metrics = sub.add_parser("metrics", help="serve this machine's metrics (worker-only hosts)")
    metrics.add_argument("--port", type=int)
    metrics.set_defaults(func=cmd_metrics)
    dev = sub.add_parser("dev", help="run everything on this machine with private Postgres/Redis")
    dev.add_argument("--port", type=int)
    dev.set_defaults(func=cmd_dev)
    serve = sub.add_parser(
        "dev-serve", help="what `lookout dev` runs: web and worker in one process"
    )
    serve.set_defaults(func=cmd_dev_serve)
    setup = sub.add_parser("dev-setup", help="what `lookout dev` runs first: migrate, demo account")
    setup.set_defaults(func=cmd_dev_setup)
    route = sub.add_parser("route", help="print how the intent router reads a message")
    route.add_argument("text", nargs="*")
    route.set_defaults(func=cmd_route)
    _admin_parser(sub.add_parser("admin", help="accounts, credits and keys"))
    return top


def _admin_parser(admin: argparse.ArgumentParser) -> None:
    actions = admin.add_subparsers(dest="action", required=True)
    user = actions.add_parser("create-user")
    user.add_argument("email")
    user.add_argument("--password", required=True)
    workspace = actions.add_parser("create-workspace")
    workspace.add_argument("name")
    workspace.add_argument("--owner", required=True, metavar="EMAIL")
    grant = actions.add_parser("grant-credits")
    grant.add_argument("workspace_id")
    grant.add_argument("amount", type=int)
    key = actions.add_parser("create-key")
    key.add_argument("workspace_id")
    key.add_argument("--name", required=True)
    # The key acts for the workspace's owner (see accounts.create_key); access.keys.SCOPES.
    key.add_argument("--scope", choices=("full", "read-only"), default="full")
    actions.add_parser("dispatch", help="run one pass of the watch dispatcher now")
    status = actions.add_parser("status", help="queues, watches and runs; exit 1 when late")
    status.add_argument("--max-overdue", type=float, metavar="SECONDS")
    status.add_argument("--json", action="store_true")
    admin.set_defaults(func=cmd_admin)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (errors.LookoutError, errors.ConfigError) as exc:
        print(f"lookout: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the one place a traceback stops
        return crash.report(exc, args.command, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
