"""What the reservation's API-key check costs (issue #22): reserve_credits (no check, as every
reservation was before) against reserve_credits_for_key (the key not revoked, not read-only, its
creator still an editor), in the same run, on the same database.

    .venv/bin/python bench/_reserve_check.py [--calls 2000] [--rounds 3] [--concurrency 8]

A diagnostic, not part of `make bench`. Each round runs both statements in turn (which goes
first alternates), `--concurrency` connections at once, each call a new ledger key; printed:
the best round's calls/s of each and their ratio (now / before).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
import time
import uuid
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import services

from lookout.access import accounts
from lookout.db import migrate, queries


async def one_round(
    db: asyncpg.Pool, sql: str, args: tuple[object, ...], calls: int, concurrency: int
) -> float:
    """Calls per second of `sql` over `calls` reservations of 1 credit."""
    left = iter(range(calls))
    workspace_id, key_id = args
    deadline = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)

    async def worker() -> None:
        async with db.acquire() as conn:
            for _ in left:
                params = [workspace_id, uuid.uuid4().hex, 1, "web.scrape", "bench", deadline]
                if key_id is not None:
                    params.append(key_id)
                assert await conn.fetchval(sql, *params) is not None

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return calls / (time.perf_counter() - started)


async def run(dsn: str, calls: int, rounds: int, concurrency: int) -> None:
    await migrate.migrate(dsn)
    db = await asyncpg.create_pool(dsn, min_size=concurrency, max_size=concurrency)
    try:
        user = await accounts.create_user(db, email="b@example.com", password="bench password 1")
        workspace = await accounts.create_workspace(
            db, name="bench", owner_id=user.id, credits=calls * rounds * 2 + 10
        )
        key = await accounts.create_key(db, workspace_id=workspace.id, name="bench")
        variants = {
            "before (no check)": (queries.get("reserve_credits"), (workspace.id, None)),
            "now (key checked)": (
                queries.get("reserve_credits_for_key"),
                (workspace.id, key.key.id),
            ),
        }
        best = dict.fromkeys(variants, 0.0)
        for n in range(rounds):
            order = list(variants) if n % 2 == 0 else list(reversed(variants))
            for name in order:
                sql, args = variants[name]
                best[name] = max(best[name], await one_round(db, sql, args, calls, concurrency))
    finally:
        await db.close()
    for name, rate in best.items():
        print(f"{name:20} {rate:8.0f} reservations/s")
    ratio = best["now (key checked)"] / best["before (no check)"]
    print(f"ratio now/before     {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with services.backing() as (dsn, _):
        asyncio.run(run(dsn, args.calls, args.rounds, args.concurrency))


if __name__ == "__main__":
    main()
