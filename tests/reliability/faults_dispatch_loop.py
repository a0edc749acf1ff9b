"""One of the two dispatchers of the two-scheduler fault test, as its own process.

`python -m tests.reliability.faults_dispatch_loop DSN SECONDS OUT.json` calls the dispatcher's
own transaction (`watches.dispatch.claim_batch`, what `dispatch_due` repeats) in a tight loop and
writes the run ids it created and the fires it claimed without creating a run (a fire already
taken by the other process: a double claim that only the unique key stopped).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
import time
from pathlib import Path

from lookout.db import pool
from lookout.watches import dispatch


async def main(dsn: str, seconds: float) -> dict[str, object]:
    run_ids: list[str] = []
    claimed = batches = 0
    async with pool.pool_context(dsn, max_size=2) as db:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            new, found = await dispatch.claim_batch(db, dt.datetime.now(dt.UTC))
            run_ids += [str(run_id) for run_id in new]
            claimed += found
            batches += bool(found)
    return {"run_ids": run_ids, "claimed": claimed, "batches": batches}


if __name__ == "__main__":
    Path(sys.argv[3]).write_text(json.dumps(asyncio.run(main(sys.argv[1], float(sys.argv[2])))))
