from __future__ import annotations

import datetime as dt

import pytest

from lookout import errors
from lookout.watches import schedule

NOW = dt.datetime(2026, 3, 7, 12, 0, tzinfo=dt.UTC)


def test_next_fire_keeps_local_wall_clock_across_dst() -> None:
    # New York springs forward on 2026-03-08: 09:00 local is 14:00 UTC before, 13:00 after.
    fires = schedule.fires("0 9 * * *", "America/New_York", NOW, 2)

    assert [f.hour for f in fires] == [14, 13]
    assert all(f.tzinfo is not None for f in fires)


def test_next_fire_is_strictly_after_and_coalesces_missed_fires() -> None:
    late = dt.datetime(2026, 3, 7, 18, 30, tzinfo=dt.UTC)

    expected = dt.datetime(2026, 3, 7, 19, tzinfo=dt.UTC)
    assert schedule.next_fire("0 * * * *", "UTC", late) == expected


@pytest.mark.parametrize(
    ("cron", "timezone", "problem"),
    [
        ("every day", "UTC", "cadence"),
        ("* * * *", "UTC", "cadence"),
        ("*/2 * * * *", "UTC", "cadence"),
        ("0 9 * * *", "Mars/Olympus", "timezone"),
    ],
)
def test_invalid_cadences_are_refused_naming_the_field(
    cron: str, timezone: str, problem: str
) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        schedule.validate(cron, timezone, min_minutes=5, now=NOW)

    assert problem in caught.value.details["fields"]


def test_describe_and_monthly_estimate() -> None:
    assert schedule.describe("0 9 * * *", "UTC") == "every day at 09:00 UTC"
    assert schedule.describe("30 8 * * 1-5", "UTC") == "every weekday at 08:30 UTC"
    assert schedule.describe("*/15 * * * *", "UTC") == "every 15 minutes"
    assert schedule.describe("0 */6 * * *", "UTC") == "every 6 hours"
    assert schedule.runs_per_month("0 9 * * *", "UTC", NOW) == 30
