"""Cadence: the recurring schedule a message states, as a 5-field cron in UTC (pure, no I/O).

The router knows no user timezone, so stated times are read as UTC and the defaults are:
morning 08:00, noon 12:00, afternoon 15:00, evening 18:00, night 22:00, midnight 00:00, and
08:00 for anything daily or slower with no stated time; "twice a day" is 08:00 and 20:00.
Weekly runs on the weekday of `now` (Monday without `now`), monthly and slower on its day of
the month capped at 28 (the 1st without `now`), yearly also in its month (January).

A number in the text is read as at most MAX_COUNT before any arithmetic: "every <320 nines>
minutes" was infinity (then OverflowError), and a count past Python's digit limit a ValueError.

Cron repeats evenly only on divisors of an hour or a day, so "every 7 minutes" runs every 6,
"every 5 hours" every 6 and "every 10 days" on the 1st and 11th; the note says so. `period_min`
is the shortest gap between two consecutive runs, the figure the minimum interval is held to.
"""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import UTC, datetime

MAX_COUNT = 100_000  # "every 10^320 minutes" reads as every 100,000 minutes (monthly, then)
_LADDER = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60, 120, 180, 240, 360, 480, 720, 1440)
_DAY = 1440
_WEEK = 7 * _DAY
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_PARTS = {"morning": 8, "noon": 12, "afternoon": 15, "evening": 18, "night": 22, "midnight": 0}
_PM_PARTS = frozenset({"afternoon", "evening", "night"})
_DOW = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
_PER_WEEK = {2: (1, 4), 3: (1, 3, 5), 4: (1, 2, 4, 5), 5: (1, 2, 3, 4, 5), 6: (1, 2, 3, 4, 5, 6)}


@dataclasses.dataclass(frozen=True)
class Cadence:
    """A UTC cron, its shortest gap between runs, and whether the minimum interval raised it."""

    cron: str
    period_min: int
    raised: bool = False
    notes: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class _Freq:
    kind: str  # "every" (n minutes), "dow", "months", "perday", "perweek"
    n: float = 0
    days: tuple[int, ...] = ()
    start: int = 0
    end: int = 0
    part: str = ""
    weak: bool = False
    note: str = ""


@dataclasses.dataclass(frozen=True)
class _Clock:
    hour: int = 8
    minute: int = 0


def find(text: str, *, now: datetime | None = None, min_interval: int = 5) -> Cadence | None:
    """The last schedule stated in `text` (lower case, typos fixed), or None."""
    text = _numbers(text)
    freqs = [f for f in _frequencies(text) if not _negated(text, f.start)]
    freqs = [f for f in freqs if not f.weak] or freqs
    if not freqs:
        return None
    last = freqs[-1]
    since = freqs[-2].end if len(freqs) > 1 else 0
    return _build(last, _clock(text, since, last.part), now, min_interval)


def daily(text: str, *, now: datetime | None = None, min_interval: int = 5) -> Cadence:
    """The cadence of a standing request that states none: daily, at a time it may state."""
    clock = _clock(_numbers(text), 0, "")
    return _build(_Freq("every", _DAY), clock, now, min_interval)


def mentions(text: str) -> bool:
    """Whether `text` states a recurring schedule that is not negated."""
    text = _numbers(text)
    return any(not _negated(text, f.start) for f in _frequencies(text))


# --- reading the text ------------------------------------------------------------------------

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty-five": 45, "forty five": 45, "forty": 40, "sixty": 60, "ninety": 90,
}  # fmt: skip
_NUMBER_RE = re.compile(r"\b(" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")\b")
_N = (
    r"(?P<n>\d+(?:\.\d+)?|other|second|2nd|third|3rd|couple(?:\s+of)?|few|several"
    r"|half(?:\s+an?)?|quarter(?:\s+of\s+an?)?|an?)"
)
_UNIT = (
    r"(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?|w"
    r"|fortnights?|months?|mos?|years?|yrs?|y)"
)
_FULLDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DAYITEM = (
    rf"(?:{_FULLDAY}s?|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b\.?"
    r"|week ?days?|work ?days?|business days?|weekends?)"
)
_DAYLIST = (
    rf"{_DAYITEM}(?:\s*(?:,|and|&|/|\+|or)\s*(?:on\s+)?{_DAYITEM})*"
    r"(?:\s+(?P<dp>mornings|afternoons|evenings|nights))?"
)
_ITEM = re.compile(
    rf"{_FULLDAY}s?|week ?days?|work ?days?|business days?|weekends?"
    r"|mon|tues?|wed|thur?s?|fri|sat|sun"
)
# "the daily specials", "an hourly forecast" name a thing, not a schedule: an adverb followed by
# a word counts only if that word is a delivery ("daily digest") or ends the schedule phrase.
_DELIVERED = (
    r"(?:digests?|reports?|summar(?:y|ies)|updates?|e-?mails?|alerts?|recaps?|briefings?|roundups?"
    r"|rundowns?|notifications?|pings?|snapshots?|checks?|runs?|scans?|polls?|reminders?|messages?"
    r"|texts?|and|at|on|in|from|for|until|starting|with|via|by|around|before|after|between|but"
    r"|please|instead|rather|too|also|basis|thanks|thank|if|when|whenever|unless|except|then)\b"
)
_PATTERNS = {
    "every": re.compile(
        rf"\b(?:every|each|once every|once each)\s+(?:single\s+)?(?:{_N}\s*-?\s*)?{_UNIT}\b"
        rf"|\b(?:at|in)\s+(?P<n2>\d+)\s*-?\s*{_UNIT.replace('unit', 'unit2')}\s+intervals\b"
    ),
    "adverb": re.compile(
        r"\b(?P<adv>half-?hourly|hourly|daily|nightly|weekly|bi-?weekly|fortnightly|monthly"
        rf"|bi-?monthly|quarterly|yearly|annually)\b(?!\s+(?!{_DELIVERED})[a-z]{{3,}})"
    ),
    "times": re.compile(
        r"\b(?:(?P<n>\d+)\s*(?:x|times)|(?P<w>once|twice|thrice))\s*"
        r"(?:(?:a|an|per|each|every|/|a-)\s*(?P<unit>minute|hour|day|week|month|year)\b"
        r"|-?\s*(?P<adv>hourly|daily|weekly|monthly|yearly)\b)"
    ),
    "days": re.compile(
        r"\b(?:(?P<lead>every|each|on|all)\s+(?:(?P<skip>other|2nd|second|alternate)\s+)?)?"
        rf"(?P<list>{_DAYLIST})"
    ),
    "part": re.compile(
        r"\b(?:every|each)\s+(?:single\s+)?"
        r"(?P<part>morning|afternoon|evening|night|noon|midnight)\b"
        r"|(?<!\bday )\b(?P<plural>mornings|afternoons|evenings|nights)\b"
    ),
}
_NEGATION = re.compile(
    r"(?:\bnot|n't|\bnever|\binstead of|\brather than|\bno need (?:to|for))\b[\w\s']{0,20}$"
)


def _numbers(text: str) -> str:
    return _NUMBER_RE.sub(lambda m: str(_NUMBER_WORDS[m.group(1)]), text)


def _negated(text: str, start: int) -> bool:
    return _NEGATION.search(text[max(0, start - 32) : start]) is not None


def _frequencies(text: str) -> list[_Freq]:
    found: list[_Freq] = []
    for kind, pattern in _PATTERNS.items():
        for match in pattern.finditer(text):
            freq = _READERS[kind](match)
            if freq is not None:
                found.append(dataclasses.replace(freq, start=match.start(), end=match.end()))
    return _drop_overlaps(sorted(found, key=lambda f: (f.start, -f.end)))


def _drop_overlaps(freqs: list[_Freq]) -> list[_Freq]:
    kept: list[_Freq] = []
    for freq in freqs:
        if kept and freq.start < kept[-1].end:
            continue
        kept.append(freq)
    return kept


def _read_every(match: re.Match[str]) -> _Freq | None:
    raw_n = match.group("n") or match.group("n2") or ""
    unit = match.group("unit") or match.group("unit2")
    if len(unit) == 1 and not raw_n[:1].isdigit():
        return None
    n = _count(raw_n)
    if unit[0] == "y" or unit.startswith("mo"):
        return _Freq("months", n * (12 if unit[0] == "y" else 1))
    scale = {"s": 1 / 60, "m": 1, "h": 60, "d": _DAY, "w": _WEEK, "f": 2 * _WEEK}[unit[0]]
    return _Freq("every", n * scale)


def _count(raw: str) -> float:
    words = {
        "other": 2.0,
        "second": 2.0,
        "2nd": 2.0,
        "third": 3.0,
        "3rd": 3.0,
        "couple": 2.0,
        "few": 3.0,
        "several": 4.0,
        "half": 0.5,
        "quarter": 0.25,
    }
    if not raw or raw.startswith("a"):
        return 1.0
    head = raw.split()[0]
    return words[head] if head in words else _bounded(head)


def _bounded(digits: str) -> float:
    """A decimal number from the text, at most MAX_COUNT (read without converting a huge one)."""
    whole = digits.partition(".")[0].lstrip("0")
    if len(whole) > len(str(MAX_COUNT)):
        return float(MAX_COUNT)
    return min(float(digits), float(MAX_COUNT))


def _read_adverb(match: re.Match[str]) -> _Freq | None:
    adv = match.group("adv").replace("-", "")
    table = {
        "halfhourly": _Freq("every", 30), "hourly": _Freq("every", 60),
        "daily": _Freq("every", _DAY), "nightly": _Freq("every", _DAY, part="night"),
        "weekly": _Freq("every", _WEEK), "biweekly": _Freq("every", 2 * _WEEK),
        "fortnightly": _Freq("every", 2 * _WEEK), "monthly": _Freq("months", 1),
        "bimonthly": _Freq("months", 2), "quarterly": _Freq("months", 3),
        "yearly": _Freq("months", 12), "annually": _Freq("months", 12),
    }  # fmt: skip
    return table[adv]


def _read_times(match: re.Match[str]) -> _Freq | None:
    word = match.group("w")
    n = {"once": 1, "twice": 2, "thrice": 3}[word] if word else int(_bounded(match.group("n")))
    adv = match.group("adv") or ""
    unit = match.group("unit") or ("day" if adv == "daily" else adv.removesuffix("ly"))
    if n < 1:
        return None
    if unit == "day":
        return _Freq("perday", n)
    if unit == "week":
        return _Freq("perweek", n)
    if unit in ("month", "year"):
        return _Freq("months", (1 if unit == "month" else 12) / n)
    return _Freq("every", (60 if unit == "hour" else 1) / n)


def _read_days(match: re.Match[str]) -> _Freq | None:
    items = _ITEM.findall(match.group("list"))
    lead = match.group("lead")
    plural = match.group("dp") is not None or any(
        item.endswith("days") or item == "weekends" for item in items
    )
    if not (plural or lead in ("every", "each", "all") or (lead == "on" and len(items) > 1)):
        return None
    days = sorted({day for item in items for day in _day_numbers(item)})
    skip = "every other week runs every week: cron cannot skip weeks" if match.group("skip") else ""
    return _Freq("dow", days=tuple(days), note=skip) if days else None


def _day_numbers(item: str) -> tuple[int, ...]:
    if item.startswith(("week", "work", "business")) and "end" not in item:
        return (1, 2, 3, 4, 5)
    if item.startswith("weekend"):
        return (0, 6)
    key = item[:3]
    return (_DOW[key],) if key in _DOW else ()


def _read_part(match: re.Match[str]) -> _Freq | None:
    part = match.group("part") or match.group("plural").removesuffix("s")
    return _Freq("every", _DAY, part=part, weak=match.group("plural") is not None)


_READERS = {
    "every": _read_every,
    "adverb": _read_adverb,
    "times": _read_times,
    "days": _read_days,
    "part": _read_part,
}


# --- building the cron -----------------------------------------------------------------------

_CLOCK = re.compile(
    r"\b(?P<h>\d{1,2})(?:[:.h](?P<m>[0-5]\d))?\s*(?P<ap>[ap])\.?m\b\.?"
    r"|\b(?:at|@|around)\s*(?P<h2>\d{1,2})(?:[:.h](?P<m2>[0-5]\d))?\b(?:\s*(?P<ap2>[ap])\.?m\b\.?)?"
    r"(?!\s*(?:%|percent|[.,]\d|min|hour|hr|day|week|time|x\b|[$€£]|euro|dollar|degree|°"
    r"|km|mile))"
    r"|\b(?P<h3>[01]?\d|2[0-3]):(?P<m3>[0-5]\d)\b"
    r"|\b(?P<named>noon|midday|midnight)\b"
    r"|(?<!\bgood )(?<!\bthis )(?<!\blast )\b(?P<part>morning|afternoon|evening|night)s?\b"
)
_NAMED = {"noon": 12, "midday": 12, "midnight": 0}


def _clock(text: str, since: int, part: str) -> _Clock:
    stated: tuple[int, int, str] | None = None
    for match in _CLOCK.finditer(text, since):
        if match.group("part"):
            part = match.group("part")
        elif match.group("named"):
            stated = (_NAMED[match.group("named")], 0, "24h")
        else:
            hour, minute = match.group("h", "m") if match.group("h") else match.group("h2", "m2")
            hour, minute = (hour, minute) if hour else match.group("h3", "m3")
            stated = (int(hour), int(minute or 0), match.group("ap") or match.group("ap2") or "")
    if stated is None:
        return _Clock(_PARTS.get(part, 8), 0)
    return _Clock(_hour24(stated, part), stated[1] % 60)


def _hour24(stated: tuple[int, int, str], part: str) -> int:
    hour, _, ampm = stated
    if ampm in ("a", "p") and 1 <= hour <= 12:
        return hour % 12 + (12 if ampm == "p" else 0)
    # "every evening at 7" is 19:00, "at night at 2" is still 02:00.
    if not ampm and part in _PM_PARTS and (5 if part == "night" else 1) <= hour < 12:
        return hour + 12
    return hour if hour < 24 else 8


def _build(freq: _Freq, clock: _Clock, now: datetime | None, min_interval: int) -> Cadence:
    anchor = _anchor(now)
    if freq.kind == "every":
        return _every(freq.n, clock, anchor, max(1, min_interval))
    if freq.kind == "perday":
        return _per_day(int(freq.n), clock, anchor, max(1, min_interval))
    if freq.kind == "perweek":
        days = _PER_WEEK.get(int(freq.n), (anchor[0],)) if freq.n < 7 else tuple(range(7))
        return _weekly(days, clock)
    if freq.kind == "dow":
        weekly = _weekly(freq.days, clock)
        return dataclasses.replace(weekly, notes=(freq.note,)) if freq.note else weekly
    return _months(freq.n, clock, anchor)


def _anchor(now: datetime | None) -> tuple[int, int, int]:
    """(cron weekday, day of month, month) that slow cadences run on."""
    if now is None:
        return 1, 1, 1
    now = now.astimezone(UTC) if now.tzinfo else now
    return (now.weekday() + 1) % 7, min(now.day, 28), now.month


def _every(minutes: float, clock: _Clock, anchor: tuple[int, int, int], floor: int) -> Cadence:
    if minutes >= _DAY:
        return _every_days(math.floor(minutes / _DAY + 0.5), clock, anchor, ())
    period = _snap(minutes)
    notes: tuple[str, ...] = ()
    if period != minutes:
        notes = (f"every {_human(minutes)} runs every {_human(period)}: cron repeats evenly "
                 "only on divisors of an hour or a day",)  # fmt: skip
    if period < floor:
        raised = _snap_up(floor)
        note = f"raised from every {_human(period)} to every {_human(raised)}, the minimum interval"
        cadence = _every(raised, clock, anchor, floor)
        return dataclasses.replace(cadence, raised=True, notes=(*notes, note))
    if period >= _DAY:
        return dataclasses.replace(_every_days(1, clock, anchor, ()), notes=notes)
    return Cadence(_subday_cron(period), period, notes=notes)


def _snap(minutes: float) -> int:
    return min(_LADDER, key=lambda step: (abs(step - minutes), -step))


def _snap_up(minutes: int) -> int:
    return next((step for step in _LADDER if step >= minutes), math.ceil(minutes / _DAY) * _DAY)


def _subday_cron(period: int) -> str:
    if period < 60:
        return "* * * * *" if period == 1 else f"*/{period} * * * *"
    hours = period // 60
    return "0 * * * *" if hours == 1 else f"0 */{hours} * * *"


def _every_days(
    days: int, clock: _Clock, anchor: tuple[int, int, int], notes: tuple[str, ...]
) -> Cadence:
    at = f"{clock.minute} {clock.hour}"
    if days <= 1:
        return Cadence(f"{at} * * *", _DAY, notes=notes)
    if days == 7:
        return _weekly((anchor[0],), clock)
    # Cron counts days within a month: stop early enough that the jump to the next 1st is
    # never shorter than the stated gap.
    firsts = list(range(1, 30 - days, days))
    if days >= 28 or len(firsts) < 2:
        note = f"every {days} days runs monthly: cron cannot count days across months"
        return dataclasses.replace(_months(max(1, days / 30), clock, anchor), notes=(note,))
    field = ",".join(map(str, firsts)) if len(firsts) == 2 else f"1-{firsts[-1]}/{days}"
    note = f"every {days} days restarts on the 1st of each month"
    return Cadence(f"{at} {field} * *", days * _DAY, notes=(*notes, note))


def _per_day(n: int, clock: _Clock, anchor: tuple[int, int, int], floor: int) -> Cadence:
    if n == 2 and floor <= 720:
        hours = sorted({clock.hour, (clock.hour + 12) % 24})
        return Cadence(f"{clock.minute} {hours[0]},{hours[1]} * * *", 720)
    return _every(_DAY / max(1, n), clock, anchor, floor)


def _weekly(days: tuple[int, ...], clock: _Clock) -> Cadence:
    ordered = sorted(set(days))
    if len(ordered) == 7:
        return Cadence(f"{clock.minute} {clock.hour} * * *", _DAY)
    gaps = [(ordered[(i + 1) % len(ordered)] - day) % 7 or 7 for i, day in enumerate(ordered)]
    field = "1-5" if ordered == [1, 2, 3, 4, 5] else ",".join(map(str, ordered))
    return Cadence(f"{clock.minute} {clock.hour} * * {field}", min(gaps) * _DAY)


def _months(n: float, clock: _Clock, anchor: tuple[int, int, int]) -> Cadence:
    if n < 1:
        return _every_days(max(1, int(28 * n)), clock, anchor, ())
    step = min((1, 2, 3, 4, 6, 12), key=lambda s: (abs(s - n), -s))
    _, day, month = anchor
    start = (month - 1) % step + 1
    months = list(range(start, 13, step))
    if step == 1:
        field = "*"
    elif len(months) == 1:
        field = str(start)
    else:
        field = f"*/{step}" if start == 1 else f"{start}-12/{step}"
    gaps = [sum(_MONTH_DAYS[(m - 1 + k) % 12] for k in range(step)) for m in months]
    return Cadence(f"{clock.minute} {clock.hour} {day} {field} *", min(gaps) * _DAY)


def _human(minutes: float) -> str:
    if minutes < 1:
        return f"{round(minutes * 60)} seconds"
    for size, unit in ((_WEEK, "week"), (_DAY, "day"), (60, "hour"), (1, "minute")):
        if minutes >= size and minutes % size == 0:
            count = int(minutes // size)
            return f"{count} {unit}" if count == 1 else f"{count} {unit}s"
    return f"{minutes:g} minutes"


# --- in words --------------------------------------------------------------------------------

_DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def describe(cron: str, timezone: str) -> str:
    """'every day at 09:00 UTC', 'every 2 hours', … (the cron itself when unusual)."""
    minute, hour, day, month, weekday = cron.split()
    at = f"{int(hour):02d}:{int(minute):02d} {timezone}" if (hour + minute).isdigit() else None
    if minute.startswith("*/") and hour == "*" and day == month == weekday == "*":
        return f"every {minute[2:]} minutes"
    if minute.isdigit() and hour.startswith("*/") and day == month == weekday == "*":
        return f"every {hour[2:]} hours"
    if minute.isdigit() and hour == "*" and day == month == weekday == "*":
        return "every hour"
    if at and day == month == "*":
        return _weekly_words(weekday, at)
    if at and day.isdigit() and month == weekday == "*":
        return f"every month on day {day} at {at}"
    return f"on the schedule “{cron}” ({timezone})"


def _weekly_words(weekday: str, at: str) -> str:
    if weekday == "*":
        return f"every day at {at}"
    if weekday == "1-5":
        return f"every weekday at {at}"
    if weekday.isdigit():
        return f"every {_DAY_NAMES[int(weekday) % 7]} at {at}"
    return f"on days {weekday} at {at}"
