"""The periodic actors as data: each one's name, queue and cron.

The actors take their name, queue and `periodic` option from here (lookout.actors), and the
scheduler sends from here (lookout.ticks) without importing a single actor module: a tick is a
message to a name on a queue, so the process that sends them needs Dramatiq's broker and this
table, not the worker stack (the scheduler held 110 MiB PSS loading it; bench/footprint.py).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Periodic:
    actor_name: str
    cron: str  # minute hour day-of-month month day-of-week, in UTC
    queue_name: str = "dispatch"  # its own queue: long turns never delay a tick


DISPATCH_DUE_WATCHES = Periodic("dispatch_due_watches", "* * * * *")
RECOVER_JOBS = Periodic("recover_jobs", "* * * * *")
RECOVER_DELIVERIES = Periodic("recover_deliveries", "* * * * *")
PRUNE_CHECKPOINTS = Periodic("prune_checkpoints", "* * * * *")
SWEEP_EXPIRED = Periodic("sweep_expired", "*/10 * * * *")
PRUNE_HISTORY = Periodic("prune_history", "17 * * * *")

ALL: tuple[Periodic, ...] = (
    DISPATCH_DUE_WATCHES,
    RECOVER_JOBS,
    RECOVER_DELIVERIES,
    PRUNE_CHECKPOINTS,
    SWEEP_EXPIRED,
    PRUNE_HISTORY,
)
