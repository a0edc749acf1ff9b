"""Cadences: validate a cron in a timezone, find the next fire (DST-correct), say it in words."""

from __future__ import annotations

import datetime as dt
import itertools
import zoneinfo

from lookout import errors
from lookout.agent import cadence

SAMPLE_FIRES = 60
# A watch fires at least once a year: a cron that cannot (`0 0 30 2 *`, or `0 0 29 2 *` with
# its four-year gaps) is refused when it is set, not left to croniter's search at every tick.
MAX_YEARS_BETWEEN_FIRES = 1
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def zone(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # "Europe": a directory
        raise errors.InvalidInput(
            f"{name!r} is not a timezone; use an IANA name such as UTC or Europe/Paris.",
            fields={"timezone": ["unknown timezone"]},
        ) from None


def next_fire(
    cron: str, timezone: str, after: dt.datetime, *, within_years: int | None = None
) -> dt.datetime:
    """The first fire strictly after `after`, in UTC; wall-clock times follow the zone's DST.
    With `within_years`, InvalidInput when there is none that soon (or none at all)."""
    import croniter  # with dateutil, ~2 MiB: loaded with the first cadence read, not at start

    local = after.astimezone(zone(timezone))
    try:
        found = croniter.croniter(cron, local, max_years_between_matches=within_years)
        fire: dt.datetime = found.get_next(dt.datetime)
    except (croniter.CroniterError, OverflowError):  # no such date, or past year 9999
        raise errors.InvalidInput(
            f"{cron!r} does not fire at least once a year (is the date impossible, such as "
            "30 February?).",
            fields={"cadence": ["no fire within a year"]},
        ) from None
    return fire.astimezone(dt.UTC)


def fires(
    cron: str, timezone: str, after: dt.datetime, count: int, *, within_years: int | None = None
) -> list[dt.datetime]:
    out, current = [], after
    for _ in range(count):
        current = next_fire(cron, timezone, current, within_years=within_years)
        out.append(current)
    return out


def validate(cron: str, timezone: str, *, min_minutes: int, now: dt.datetime) -> None:
    """InvalidInput unless `cron` is a 5-field cron firing at most every `min_minutes` and at
    least once a year (every gap of its first SAMPLE_FIRES fires)."""
    import croniter

    if len(cron.split()) != 5 or not croniter.croniter.is_valid(cron):
        raise errors.InvalidInput(
            f"{cron!r} is not a 5-field cron (minute hour day month weekday).",
            fields={"cadence": ["invalid cron"]},
        )
    zone(timezone)
    sample = fires(cron, timezone, now, SAMPLE_FIRES, within_years=MAX_YEARS_BETWEEN_FIRES)
    gap = min((b - a for a, b in itertools.pairwise(sample)), default=dt.timedelta.max)
    if gap < dt.timedelta(minutes=min_minutes):
        raise errors.InvalidInput(
            f"Watches run at most every {min_minutes} minutes; {cron!r} runs more often.",
            fields={"cadence": [f"at least {min_minutes} minutes apart"]},
        )


def runs_per_month(cron: str, timezone: str, now: dt.datetime) -> int:
    """How many times the cron fires in the next 30 days (bounded count)."""
    end = now + dt.timedelta(days=30)
    count, current = 0, now
    while count < 30 * 24 * 12:
        current = next_fire(cron, timezone, current)
        if current > end:
            break
        count += 1
    return count


def describe(cron: str, timezone: str) -> str:
    """'every day at 09:00 UTC', 'every 2 hours', … (the cron itself when unusual)."""
    return cadence.describe(cron, timezone)
