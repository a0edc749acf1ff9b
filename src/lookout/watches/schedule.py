"""Cadences: validate a cron in a timezone, find the next fire (DST-correct), say it in words."""

from __future__ import annotations

import datetime as dt
import itertools
import zoneinfo

from croniter import croniter

from lookout import errors
from lookout.agent import cadence

SAMPLE_FIRES = 60


def zone(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise errors.InvalidInput(
            f"{name!r} is not a timezone; use an IANA name such as UTC or Europe/Paris.",
            fields={"timezone": ["unknown timezone"]},
        ) from None


def next_fire(cron: str, timezone: str, after: dt.datetime) -> dt.datetime:
    """The first fire strictly after `after`, in UTC; wall-clock times follow the zone's DST."""
    local = after.astimezone(zone(timezone))
    fire: dt.datetime = croniter(cron, local).get_next(dt.datetime)
    return fire.astimezone(dt.UTC)


def fires(cron: str, timezone: str, after: dt.datetime, count: int) -> list[dt.datetime]:
    out, current = [], after
    for _ in range(count):
        current = next_fire(cron, timezone, current)
        out.append(current)
    return out


def validate(cron: str, timezone: str, *, min_minutes: int, now: dt.datetime) -> None:
    """InvalidInput unless `cron` is a 5-field cron firing at most every `min_minutes`."""
    if len(cron.split()) != 5 or not croniter.is_valid(cron):
        raise errors.InvalidInput(
            f"{cron!r} is not a 5-field cron (minute hour day month weekday).",
            fields={"cadence": ["invalid cron"]},
        )
    zone(timezone)
    sample = fires(cron, timezone, now, SAMPLE_FIRES)
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
