"""The next check said in the watch's zone, and in the asker's when theirs is another."""

from __future__ import annotations

import datetime as dt

from lookout.watches import controls

AT = dt.datetime(2026, 12, 3, 0, 30, tzinfo=dt.UTC)


def test_in_the_watchs_zone_alone_when_the_asker_is_there_or_unknown() -> None:
    assert controls.next_check(AT, "Asia/Tokyo", None) == "Next check: 2026-12-03 09:30 Asia/Tokyo."
    assert controls.next_check(AT, "Asia/Tokyo", "Asia/Tokyo").endswith("09:30 Asia/Tokyo.")
    assert controls.next_check(AT, "Asia/Tokyo", "Not/AZone").endswith("09:30 Asia/Tokyo.")


def test_the_askers_time_names_its_day_when_that_differs() -> None:
    said = controls.next_check(AT, "Asia/Tokyo", "America/New_York")
    assert said == (
        "Next check: 2026-12-03 09:30 Asia/Tokyo (2026-12-02 19:30 your time, America/New_York)."
    )
    assert controls.next_check(AT, "UTC", "Europe/Paris") == (
        "Next check: 2026-12-03 00:30 UTC (01:30 your time, Europe/Paris)."
    )
