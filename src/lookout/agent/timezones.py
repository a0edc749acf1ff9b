"""The timezone a message states ("9am EST", "7 Berlin time", "18:00 CET"), as an IANA name.

Pure. Abbreviations count right after a clock time or before "time"; a city or country counts
before "time" / "timezone", or after a clock time and "in". The text is the router's normalized
text (lower case). `strip` returns the text with the zone phrase removed, a bare hour before it
read as a clock ("7 berlin time" -> "at 7"), so the cadence reader sees only the clock.
"""

from __future__ import annotations

import functools
import re
import zoneinfo

_ABBREVIATIONS = {
    "est": "America/New_York",
    "edt": "America/New_York",
    "et": "America/New_York",
    "eastern": "America/New_York",
    "cst": "America/Chicago",
    "cdt": "America/Chicago",
    "ct": "America/Chicago",
    "central": "America/Chicago",
    "mst": "America/Denver",
    "mdt": "America/Denver",
    "mt": "America/Denver",
    "mountain": "America/Denver",
    "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles",
    "pt": "America/Los_Angeles",
    "pacific": "America/Los_Angeles",
    "utc": "UTC",
    "gmt": "UTC",
    "z": "UTC",
    "zulu": "UTC",
    "bst": "Europe/London",
    "cet": "Europe/Berlin",
    "cest": "Europe/Berlin",
    "central european": "Europe/Berlin",
    "eet": "Europe/Athens",
    "eest": "Europe/Athens",
    "wet": "Europe/Lisbon",
    "west": "Europe/Lisbon",
    "ist": "Asia/Kolkata",
    "jst": "Asia/Tokyo",
    "kst": "Asia/Seoul",
    "hkt": "Asia/Hong_Kong",
    "sgt": "Asia/Singapore",
    "aest": "Australia/Sydney",
    "aedt": "Australia/Sydney",
    "awst": "Australia/Perth",
    "nzst": "Pacific/Auckland",
    "nzdt": "Pacific/Auckland",
    "msk": "Europe/Moscow",
    "brt": "America/Sao_Paulo",
    "akst": "America/Anchorage",
    "hst": "Pacific/Honolulu",
}
_PLACES = {
    "nyc": "America/New_York",
    "new york city": "America/New_York",
    "boston": "America/New_York",
    "washington": "America/New_York",
    "miami": "America/New_York",
    "atlanta": "America/New_York",
    "sf": "America/Los_Angeles",
    "san francisco": "America/Los_Angeles",
    "seattle": "America/Los_Angeles",
    "la": "America/Los_Angeles",
    "austin": "America/Chicago",
    "dallas": "America/Chicago",
    "houston": "America/Chicago",
    "munich": "Europe/Berlin",
    "hamburg": "Europe/Berlin",
    "frankfurt": "Europe/Berlin",
    "cologne": "Europe/Berlin",
    "german": "Europe/Berlin",
    "germany": "Europe/Berlin",
    "uk": "Europe/London",
    "british": "Europe/London",
    "england": "Europe/London",
    "french": "Europe/Paris",
    "france": "Europe/Paris",
    "spain": "Europe/Madrid",
    "spanish": "Europe/Madrid",
    "barcelona": "Europe/Madrid",
    "italy": "Europe/Rome",
    "italian": "Europe/Rome",
    "milan": "Europe/Rome",
    "dutch": "Europe/Amsterdam",
    "netherlands": "Europe/Amsterdam",
    "swiss": "Europe/Zurich",
    "geneva": "Europe/Zurich",
    "japan": "Asia/Tokyo",
    "japanese": "Asia/Tokyo",
    "india": "Asia/Kolkata",
    "indian": "Asia/Kolkata",
    "mumbai": "Asia/Kolkata",
    "delhi": "Asia/Kolkata",
    "new delhi": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata",
    "bengaluru": "Asia/Kolkata",
    "china": "Asia/Shanghai",
    "beijing": "Asia/Shanghai",
    "korea": "Asia/Seoul",
    "korean": "Asia/Seoul",
    "australia": "Australia/Sydney",
    "melbourne": "Australia/Melbourne",
    "tel aviv": "Asia/Jerusalem",
    "israel": "Asia/Jerusalem",
    "brazil": "America/Sao_Paulo",
    "rio": "America/Sao_Paulo",
    "vancouver": "America/Vancouver",
    "montreal": "America/Toronto",
    "ontario": "America/Toronto",
    "quebec": "America/Toronto",
    "ireland": "Europe/Dublin",
    "irish": "Europe/Dublin",
    "portugal": "Europe/Lisbon",
    "greece": "Europe/Athens",
    "finland": "Europe/Helsinki",
    "sweden": "Europe/Stockholm",
    "norway": "Europe/Oslo",
    "denmark": "Europe/Copenhagen",
    "poland": "Europe/Warsaw",
    "austria": "Europe/Vienna",
    "belgium": "Europe/Brussels",
    "czech": "Europe/Prague",
    "hawaii": "Pacific/Honolulu",
    "london": "Europe/London",
    "local": "",
}
# Zone cities that are also everyday words before "time" ("christmas time", "wake time").
_NOT_PLACES = frozenset(
    {
        "christmas",
        "easter",
        "wake",
        "midway",
        "center",
        "knox",
        "salem",
        "new salem",
        "beulah",
        "tell city",
        "marengo",
        "monticello",
    }
)
_CLOCK = r"(?:\d{1,2}(?::[0-5]\d)?\s*(?:[ap]\.?m\.?)?|noon|midnight|midday)"


@functools.cache
def _cities() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in sorted(zoneinfo.available_timezones()):
        head, _, city = name.rpartition("/")
        if (
            head.split("/")[0]
            in {"Europe", "America", "Asia", "Africa", "Australia", "Pacific", "Atlantic", "Indian"}
            and city
        ):
            found.setdefault(city.replace("_", " ").lower(), name)
    return {**{c: z for c, z in found.items() if c not in _NOT_PLACES}, **_PLACES}


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    places = "|".join(re.escape(p) for p in sorted(_cities(), key=len, reverse=True))
    abbrs = "|".join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
    iana = re.compile(
        r"\b(?P<iana>(?:europe|america|asia|africa|australia|pacific|atlantic"
        r"|indian)/[a-z_]+(?:/[a-z_]+)?)\b"
    )
    named = re.compile(
        rf"(?:\bin\s+)?\(?\b(?P<name>{places}|{abbrs})\)?\s+(?:local\s+)?(?:time(?:\s*zone)?"
        r"|timezone|tz)\b"
    )
    after_clock = re.compile(
        rf"(?P<clock>{_CLOCK})\s*(?:,\s*|\s+in\s+|\s+)?\(?(?P<name>{abbrs})\)?(?![\w/])"
        rf"|(?P<clock2>{_CLOCK})\s+in\s+(?P<place>{places})\b"
    )
    return iana, named, after_clock


def find(plain: str) -> tuple[str, int, int] | None:
    """(IANA name, start, end of the zone phrase) in `plain`, or None."""
    iana, named, after_clock = _patterns()
    if match := iana.search(plain):
        name = next((z for z in zoneinfo.available_timezones() if z.lower() == match["iana"]), None)
        if name:
            return name, match.start(), match.end()
    if match := named.search(plain):
        zone = _ABBREVIATIONS.get(match["name"]) or _cities().get(match["name"])
        if zone:
            return zone, match.start(), match.end()
    if match := after_clock.search(plain):
        if match["name"]:
            return _ABBREVIATIONS[match["name"]], match.start("name"), match.end()
        zone = _cities().get(match["place"], "")
        if zone:
            return zone, match.end("clock2"), match.end()
    return None


def strip(plain: str) -> tuple[str | None, str]:
    """(the zone stated or None, `plain` without the zone phrase, a bare hour made a clock)."""
    found = find(plain)
    if found is None:
        return None, plain
    zone, start, end = found
    before = plain[:start].rstrip(" (,")
    bare = re.search(r"(?<![:\d])(?<!\bat )(?<!@)\b(\d{1,2})$", before)
    if bare is not None and int(bare.group(1)) < 24:
        before = before[: bare.start()] + "at " + bare.group(1)
    return zone, f"{before} {plain[end:].lstrip(') ')}".strip()
