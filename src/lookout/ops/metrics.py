"""Every Prometheus metric Lookout records, and the text exposition that merges its processes.

Metrics live in this module's registry. Under the `lookout` command every process (web, each
worker process, scheduler) writes them to one directory (see ops.multiproc) and /metrics reads
them all; a process that was not started that way (tests) serves its own values, plus a
configured directory's.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, values
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_FAST = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_SLOW = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)
_LAG = (1, 5, 15, 30, 60, 120, 300, 900, 3600, 21600)

HTTP_REQUESTS = Counter(
    "lookout_http_requests", "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"], registry=REGISTRY,
)  # fmt: skip
HTTP_DURATION = Histogram(
    "lookout_http_request_duration_seconds", "Time to answer an HTTP request (SSE: stream life).",
    ["route", "method"], buckets=_FAST, registry=REGISTRY,
)  # fmt: skip
VERB_CALLS = Counter(
    "lookout_verb_calls", "Verb calls by verb, door and outcome (ok, queued or the error code).",
    ["verb", "door", "outcome"], registry=REGISTRY,
)  # fmt: skip
VERB_DURATION = Histogram(
    "lookout_verb_call_duration_seconds", "Time a door waited for a verb call.",
    ["verb", "door"], buckets=_FAST, registry=REGISTRY,
)  # fmt: skip
CREDITS = Counter(
    "lookout_credits_charged", "Credits charged, by verb and door (jobs when they settle).",
    ["verb", "door"], registry=REGISTRY,
)  # fmt: skip
TURNS = Counter(
    "lookout_chat_turns", "Chat turns by source (user, api, automation) and outcome.",
    ["source", "outcome"], registry=REGISTRY,
)  # fmt: skip
TURN_DURATION = Histogram(
    "lookout_chat_turn_duration_seconds", "Time a chat turn took, lease to release.",
    ["source"], buckets=_SLOW, registry=REGISTRY,
)  # fmt: skip
DISPATCH_LAG = Histogram(
    "lookout_watch_dispatch_lag_seconds", "How late a watch was when the dispatcher claimed it.",
    buckets=_LAG, registry=REGISTRY,
)  # fmt: skip
WATCH_RUNS = Counter(
    "lookout_watch_runs", "Watch runs a worker ended, by status (requeued: cut off by shutdown).",
    ["status"], registry=REGISTRY,
)  # fmt: skip
MESSAGES = Counter(
    "lookout_worker_messages", "Dramatiq messages processed, by actor and outcome.",
    ["actor", "outcome"], registry=REGISTRY,
)  # fmt: skip
MESSAGE_DURATION = Histogram(
    "lookout_worker_message_duration_seconds", "Time a worker spent on a message, by actor.",
    ["actor"], buckets=_SLOW, registry=REGISTRY,
)  # fmt: skip
SSE_STREAMS = Gauge(
    "lookout_sse_streams_open", "SSE streams open now.", registry=REGISTRY,
    multiprocess_mode="livesum",
)  # fmt: skip


def observe_dispatch_lag(now: dt.datetime, scheduled: Iterable[dt.datetime]) -> None:
    for when in scheduled:
        DISPATCH_LAG.observe(max(0.0, (now - when).total_seconds()))


def multiprocess() -> bool:
    """True when this process writes its metrics to the shared directory."""
    return values.ValueClass is not values.MutexValue


def exposition(directory: Path | None, live: Sequence[Metric] = ()) -> bytes:
    """The text format: this process's metrics (or the whole directory's), plus `live` ones."""
    sources: list[Collector] = []
    if multiprocess():
        sources.append(_directory(os.environ["PROMETHEUS_MULTIPROC_DIR"]))
    else:
        sources.append(REGISTRY)
        if directory is not None and directory.is_dir():
            sources.append(_directory(str(directory)))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged([*sources, _Fixed(live)]))
    return generate_latest(registry)


def _directory(path: str) -> Collector:
    return MultiProcessCollector(None, path=path)  # type: ignore[no-untyped-call]


def serve(host: str, port: int) -> None:
    """Serve this machine's directory over HTTP until killed (`lookout metrics`)."""
    import threading

    from prometheus_client import start_http_server

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_directory(os.environ["PROMETHEUS_MULTIPROC_DIR"]))
    start_http_server(port, addr=host, registry=registry)
    threading.Event().wait()


class _Fixed(Collector):
    def __init__(self, metrics: Sequence[Metric]) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return list(self.metrics)


class _Merged(Collector):
    """Families from several sources as one: samples with the same labels are summed."""

    def __init__(self, sources: Sequence[Collector]) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Metric]:
        merged: dict[str, Metric] = {}
        sums: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
        for source in self.sources:
            for family in source.collect():
                if family.name not in merged:
                    merged[family.name] = Metric(family.name, family.documentation, family.type)
                found = sums.setdefault(family.name, {})
                for sample in family.samples:
                    if sample.name.endswith("_created"):
                        continue  # a per-process timestamp: meaningless once summed
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    found[key] = found.get(key, 0.0) + sample.value
        for name, family in merged.items():
            for (sample_name, labels), value in sums[name].items():
                family.add_sample(sample_name, dict(labels), value)
            yield family
