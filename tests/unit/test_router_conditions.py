"""The router on conditions, timezones and watch controls: a labelled table of messages written
for this (tests/unit/router_conditions.jsonl), accuracy per field printed and held to a bar."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lookout.agent import router, wants

NOW = datetime(2025, 1, 8, 10, 0, tzinfo=UTC)  # a Wednesday, as in test_router
CASES: list[dict[str, Any]] = [
    json.loads(line)
    for line in Path(__file__).with_name("router_conditions.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
THRESHOLDS = {
    "intent": 0.97,
    "urls": 1.0,
    "control": 0.95,
    "condition_kind": 0.95,
    "condition": 0.9,
    "timezone": 0.97,
    "cadence": 0.97,
}


def _kind(condition: dict[str, Any] | None) -> str | None:
    return None if condition is None else str(condition["kind"])


def _fields(case: dict[str, Any], found: router.Route) -> dict[str, tuple[object, object]]:
    """field -> (got, want), for the fields this case labels."""
    pairs: dict[str, tuple[object, object]] = {
        "intent": (found.intent, case["intent"]),
        "urls": (list(found.urls), case["urls"]),
        "control": (found.control, case["control"]),
        "condition_kind": (_kind(found.condition), _kind(case["condition"])),
        "condition": (found.condition, case["condition"]),
    }
    if "timezone" in case:
        pairs["timezone"] = (found.timezone, case["timezone"])
    if "cadence" in case:
        pairs["cadence"] = (
            (found.cadence, found.period_min),
            (case["cadence"], case["period_min"]),
        )
    return pairs


def _accuracy() -> tuple[dict[str, float], dict[str, int], list[str]]:
    hits = dict.fromkeys(THRESHOLDS, 0)
    seen = dict.fromkeys(THRESHOLDS, 0)
    misses = []
    for case in CASES:
        for field, (got, want) in _fields(case, router.route(case["text"], now=NOW)).items():
            seen[field] += 1
            hits[field] += got == want
            if got != want:
                misses.append(f"  miss {field}: {case['text']!r}: got {got!r}, want {want!r}")
    return {f: hits[f] / seen[f] for f in THRESHOLDS}, seen, misses


def test_the_table_covers_every_kind_control_and_timezone_form() -> None:
    assert len(CASES) >= 150
    kinds = {_kind(case["condition"]) for case in CASES}
    assert kinds >= {*wants.KINDS, None}
    controls = {case["control"] for case in CASES}
    assert controls >= {
        "describe_watch",
        "pause_watch",
        "resume_watch",
        "edit_watch",
        "stop_watch",
        "refresh_watch",
    }
    zones = {case.get("timezone") for case in CASES} - {None, "UTC"}
    assert len(zones) >= 8


def test_accuracy_per_field_meets_the_bar(capsys: pytest.CaptureFixture[str]) -> None:
    accuracy, seen, misses = _accuracy()
    with capsys.disabled():
        print(f"\nrouter on {len(CASES)} condition / timezone / control messages:")
        for field, value in accuracy.items():
            print(
                f"  {field:15} {value:6.1%} of {seen[field]:3}  (needs >= {THRESHOLDS[field]:.0%})"
            )
        print("\n".join(misses))
    for field, threshold in THRESHOLDS.items():
        assert accuracy[field] >= threshold, f"{field}: {accuracy[field]:.1%} < {threshold:.0%}"


def test_a_question_about_a_watch_never_starts_stops_or_replaces_one() -> None:
    for case in CASES:
        if case["control"] == "describe_watch":
            found = router.route(case["text"], now=NOW)
            assert found.intent == "control" and found.control == "describe_watch", case["text"]
            assert found.cadence is None


def test_the_cron_is_written_in_the_stated_zone() -> None:
    found = router.route("check https://example.com/news every day at 9am EST", now=NOW)
    assert (found.cadence, found.timezone) == ("0 9 * * *", "America/New_York")
    assert found.to_dict()["timezone"] == "America/New_York"
    plain = router.route("check https://example.com/news every day at 9am", now=NOW)
    assert (plain.cadence, plain.timezone) == ("0 9 * * *", "UTC")


def test_a_reply_amends_cadence_and_condition() -> None:
    hourly = router.amendment("hourly", now=NOW)
    assert hourly.cadence is not None and hourly.cadence.cron == "0 * * * *"
    assert hourly.condition is None
    below = router.amendment("below 45", now=NOW)
    assert below.cadence is None
    assert below.condition == {"kind": "below", "value": 45.0, "text": None, "unit": None}
    assert router.amendment("no thanks", now=NOW) == router.Amendment(None, None, None)


def test_still_fast_on_the_whole_table() -> None:
    # Not a timing assertion on wall clock alone: the table's mean must stay well below 1 ms,
    # with a generous margin for a loaded machine (bench/router.py measures it properly).
    texts = [case["text"] for case in CASES]
    start = time.perf_counter()
    for text in texts * 3:
        router.route(text, now=NOW)
    mean_ms = (time.perf_counter() - start) * 1000 / (len(texts) * 3)
    assert mean_ms < 5, mean_ms


def test_negated_commands_are_read_as_meant() -> None:
    negated = [case for case in CASES if "don't" in case["text"] and case["control"]]
    assert len(negated) >= 4
    for case in negated:
        assert router.route(case["text"], now=NOW).control == case["control"], case["text"]
