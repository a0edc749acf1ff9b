"""The /metrics text merges this process's metrics with other processes' files."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

from prometheus_client.metrics_core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from lookout.ops import metrics

CHILD = """
import os, sys
os.environ["PROMETHEUS_MULTIPROC_DIR"] = sys.argv[1]
from lookout.ops import metrics
metrics.TURNS.labels("automation", "succeeded").inc(3)
metrics.WATCH_RUNS.labels("succeeded").inc()
"""


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_another_process_counts_add_to_ours(tmp_path: Path) -> None:
    # Given a worker process that recorded turns into the shared directory
    subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], check=True)
    before = samples(metrics.exposition(None))
    key = ("lookout_chat_turns_total", (("outcome", "succeeded"), ("source", "automation")))

    # When this process records one more and exposes both
    metrics.TURNS.labels("automation", "succeeded").inc()
    merged = samples(metrics.exposition(tmp_path))

    # Then the one family sums both processes, once
    assert merged[key] == before.get(key, 0) + 1 + 3
    assert merged[("lookout_watch_runs_total", (("status", "succeeded"),))] >= 1
    assert not any(name.endswith("_created") for name, _ in merged)


def test_live_gauges_and_lag_are_exposed() -> None:
    now = dt.datetime.now(dt.UTC)
    metrics.observe_dispatch_lag(now, [now - dt.timedelta(seconds=90)])
    live = [GaugeMetricFamily("lookout_redis_up", "1 when Redis answered.", value=1)]

    found = samples(metrics.exposition(None, live))

    assert found[("lookout_redis_up", ())] == 1
    assert found[("lookout_watch_dispatch_lag_seconds_bucket", (("le", "120.0"),))] >= 1
