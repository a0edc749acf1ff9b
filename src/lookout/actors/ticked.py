"""The Dramatiq options of a periodic actor, from its entry in lookout.periodic."""

from __future__ import annotations

from typing import Any

import dramatiq

from lookout import periodic


def options(entry: periodic.Periodic) -> dict[str, Any]:
    """Its name and queue, and periodiq's `periodic` option: the workers' PeriodiqMiddleware
    drops a tick older than its skip delay (lookout.broker). Not on a broker that only sends
    (`lookout web`), which has no PeriodiqMiddleware to read it."""
    found = {"actor_name": entry.actor_name, "queue_name": entry.queue_name}
    if "periodic" in dramatiq.get_broker().actor_options:
        import periodiq

        found["periodic"] = periodiq.cron(entry.cron)
    return found
