"""The intent router read against a labelled table of messages, with per-field accuracy."""

from __future__ import annotations

import io
import itertools
import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from croniter import croniter

from lookout.agent import route_cli, router

NOW = datetime(2025, 1, 8, 10, 0, tzinfo=UTC)  # a Wednesday: "weekly" runs on cron day 3
CASES: list[dict[str, Any]] = [
    json.loads(line)
    for line in Path(__file__).with_name("router_cases.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
THRESHOLDS = {"intent": 0.95, "urls": 1.0, "cadence": 1.0, "control": 1.0}
Reading = dict[str, Any]


def _expected(case: dict[str, Any]) -> Reading:
    standing = case["intent"] == "standing"
    return {
        "intent": case["intent"],
        "urls": case["urls"],
        "cadence": (case["cadence"], case["period_min"]) if standing else None,
        "control": case.get("control"),
    }


def _read(text: str) -> Reading:
    found = router.route(text, now=NOW)
    cadence = (found.cadence, found.period_min) if found.cadence else None
    return {
        "intent": found.intent,
        "urls": list(found.urls),
        "cadence": cadence,
        "control": found.control,
    }


_BASE_STOP = ("stop", "cancel", "pause", "unsubscribe")
_BASE_REFRESH = ("run it now", "refresh", "again", "rerun", "re-run")
_BASE_STANDING = ("watch", "track", "monitor", "keep an eye", "notify", "alert", "every", "daily")
_BASE_STANDING += ("hourly", "weekly", "let me know", "over time")
_BASE_CRONS = {"hourly": ("0 * * * *", 60), "weekly": ("0 8 * * 3", 10080)}


def keyword_baseline(text: str) -> Reading:
    """The naive reading the router must beat: keyword lookup and a plain URL regex."""
    lowered = text.lower()
    intent, control, cadence = "one_shot", None, None
    if any(word in lowered for word in _BASE_STOP):
        intent, control = "control", "stop_watch"
    elif any(word in lowered for word in _BASE_REFRESH):
        intent, control = "control", "refresh_watch"
    elif any(word in lowered for word in _BASE_STANDING):
        intent = "standing"
        cadence = next((v for k, v in _BASE_CRONS.items() if k in lowered), ("0 8 * * *", 1440))
    elif "check" in lowered or "look at" in lowered or "http" in lowered:
        intent = "ambiguous"
    urls = list(dict.fromkeys(re.findall(r"https?://\S+", text)))
    return {"intent": intent, "urls": urls, "cadence": cadence, "control": control}


def _accuracy(read: Callable[[str], Reading]) -> tuple[dict[str, float], dict[str, list[str]]]:
    hits = dict.fromkeys(THRESHOLDS, 0)
    misses: dict[str, list[str]] = {field: [] for field in THRESHOLDS}
    for case in CASES:
        got, want = read(case["text"]), _expected(case)
        for field in THRESHOLDS:
            if got[field] == want[field]:
                hits[field] += 1
            else:
                misses[field].append(f"{case['text']!r}: got {got[field]!r}, want {want[field]!r}")
    return {field: hits[field] / len(CASES) for field in THRESHOLDS}, misses


def _report(ours: dict[str, float], base: dict[str, float], misses: dict[str, list[str]]) -> str:
    lines = [f"\nintent router on {len(CASES)} labelled messages (keyword baseline alongside)"]
    for field, threshold in THRESHOLDS.items():
        lines.append(
            f"  {field:<8} router {ours[field]:7.1%}   baseline {base[field]:7.1%}"
            f"   (needs >= {threshold:.0%})"
        )
    lines += [f"  miss {field}: {line}" for field, found in misses.items() for line in found]
    return "\n".join(lines)


def test_accuracy_per_field_meets_thresholds_and_beats_keyword_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert len(CASES) >= 150
    assert {case["intent"] for case in CASES} == {"one_shot", "standing", "ambiguous", "control"}
    ours, misses = _accuracy(_read)
    base, _ = _accuracy(keyword_baseline)
    with capsys.disabled():
        print(_report(ours, base, misses))
    for field, threshold in THRESHOLDS.items():
        assert ours[field] >= threshold, f"{field}: {ours[field]:.1%} < {threshold:.0%}"
    assert ours["intent"] >= base["intent"] + 0.15


def _case_id(case: dict[str, Any]) -> str:
    return case["text"][:48]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_table_urls_cadence_and_control(case: dict[str, Any]) -> None:
    found = router.route(case["text"], now=NOW)
    want = _expected(case)
    assert list(found.urls) == want["urls"]
    assert ((found.cadence, found.period_min) if found.cadence else None) == want["cadence"]
    assert found.control == want["control"]
    for field in ("notify", "query", "place", "location"):
        if field in case:
            assert getattr(found, field) == case[field], field
    assert found.cadence_raised == case.get("raised", False)


@pytest.mark.parametrize("case", [c for c in CASES if c.get("cadence")], ids=_case_id)
def test_labelled_crons_run_with_the_stated_shortest_gap(case: dict[str, Any]) -> None:
    runs = croniter(case["cadence"], NOW)
    times = [runs.get_next(datetime) for _ in range(60)]
    gaps = [
        (later - earlier) / timedelta(minutes=1) for earlier, later in itertools.pairwise(times)
    ]
    assert min(gaps) == case["period_min"]


def test_explicit_one_shot_time_words_win_over_a_watch_verb() -> None:
    assert router.route("track https://example.com/price right now").intent == "one_shot"
    assert router.route("watch example.com/a? no, just tell me now").intent == "one_shot"
    assert router.route("monitor https://example.com/a currently").intent == "one_shot"
    assert router.route("right now and every hour, check example.com").intent == "standing"


def test_the_last_stated_cadence_wins_and_negated_ones_do_not_count() -> None:
    assert router.route("every month\u2026 no, every week: example.com", now=NOW).cadence == (
        "0 8 * * 3"
    )
    assert router.route("watch example.com daily, not hourly").cadence == "0 8 * * *"
    assert router.route("every day at 9, no wait, at 10, check example.com").cadence == (
        "0 10 * * *"
    )


def test_a_cadence_below_the_minimum_is_raised_and_says_so() -> None:
    found = router.route("watch example.com every 10 minutes", min_interval_minutes=15)
    assert (found.cadence, found.period_min, found.cadence_raised) == ("*/15 * * * *", 15, True)
    assert any("minimum" in note for note in found.notes)
    odd = router.route("watch example.com every 5 minutes", min_interval_minutes=7)
    assert (odd.cadence, odd.cadence_raised) == ("*/10 * * * *", True)
    fine = router.route("watch example.com every 10 minutes", min_interval_minutes=10)
    assert (fine.cadence, fine.cadence_raised, fine.notes) == ("*/10 * * * *", False, ())


def test_slow_cadences_anchor_on_now_in_utc_or_default_without_it() -> None:
    assert router.route("weekly: example.com").cadence == "0 8 * * 1"
    assert router.route("monthly: example.com").cadence == "0 8 1 * *"
    # 01:00 on Wednesday at UTC+5 is still Tuesday in UTC
    east = datetime(2025, 1, 8, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    assert router.route("weekly: example.com", now=east).cadence == "0 8 * * 2"
    assert router.route("monthly: example.com", now=datetime(2025, 3, 31)).cadence == "0 8 28 * *"


def test_a_standing_request_without_cadence_runs_daily_at_a_stated_time() -> None:
    assert router.route("watch https://example.com/a").cadence == "0 8 * * *"
    assert router.route("watch https://example.com/a, report at 6pm").cadence == "0 18 * * *"


def test_maps_requests_carry_query_and_location() -> None:
    found = router.route("find pharmacies near Dam Square, Amsterdam")
    assert (found.intent, found.query, found.location) == (
        "one_shot",
        "pharmacies",
        "Dam Square, Amsterdam",
    )
    assert router.route("cafes near me").location is None


def test_to_dict_is_json_with_the_cli_keys_and_utc() -> None:
    data = json.loads(json.dumps(router.route("track example.com hourly").to_dict()))
    assert {"intent", "urls", "cadence", "control", "period_min", "notes"} <= data.keys()
    assert data["timezone"] == "UTC" and data["urls"] == ["https://example.com"]


def test_cli_prints_one_json_object_for_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOOKOUT_MIN_WATCH_MINUTES", raising=False)
    assert route_cli.main(["track", "https://example.com/jobs", "every", "3", "hours"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["intent"], data["urls"], data["cadence"], data["control"]) == (
        "standing",
        ["https://example.com/jobs"],
        "0 */3 * * *",
        None,
    )


def test_cli_reads_one_message_per_stdin_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_MIN_WATCH_MINUTES", "30")
    monkeypatch.setattr(
        sys, "stdin", io.StringIO("stop watching\n\nwatch a.example.com every 5 min\n")
    )
    assert route_cli.main([]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["intent"] for line in lines] == ["control", "one_shot", "standing"]
    assert (lines[2]["cadence"], lines[2]["cadence_raised"]) == ("*/30 * * * *", True)
