"""What an import file asks for, read without I/O: Lookout's own export, or a changedetection.io
backup's `url-watches.json` (its `watching` map; tag names from `settings.application.tags`).

changedetection.io's watches carry ~80 keys (filters, browser steps, notification bodies, …).
We map url, title (else page_title), time_between_check (else the file's default interval, else
cdio's own 3 hours), tags (uuids, and the older comma-separated `tag`) and paused, and ignore
the others deliberately; a file without a `watching` object, or a watch without an http(s)
URL, is refused with the reason."""

from __future__ import annotations

import dataclasses
import math
import urllib.parse
from typing import Any

from lookout import errors
from lookout.schema import portability as limits

MAX_WATCHES = limits.MAX_WATCHES
MAX_TAGS = limits.MAX_TAGS
MAX_TAG = limits.MAX_TAG
MAX_TITLE = limits.MAX_TITLE
MAPPED = frozenset({"url", "title", "page_title", "time_between_check",
                    "time_between_check_use_default", "tags", "tag", "paused"})  # fmt: skip
MAX_IGNORED = 100
MAX_URL = 2048
CDIO_DEFAULT_MINUTES = 180  # changedetection.io's own default: every 3 hours
_MINUTE_STEPS = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)
_HOUR_STEPS = (1, 2, 3, 4, 6, 8, 12)
_UNITS = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}


@dataclasses.dataclass(frozen=True)
class Planned:
    """One watch to create: its chat's title, the question re-asked, cadence and the rest."""

    title: str
    message: str
    cadence: str
    timezone: str = "UTC"
    enabled: bool = True
    tags: tuple[str, ...] = ()
    condition: dict[str, Any] | None = None
    notify: bool = False


def cron_every(minutes: int) -> str:
    """A cron that fires about every `minutes` (never more often)."""
    if minutes < 60:
        step = next(s for s in (*_MINUTE_STEPS, 60) if s >= minutes)
        return "0 * * * *" if step == 60 else f"*/{step} * * * *"
    if minutes < 1440:
        hours = next((s for s in _HOUR_STEPS if s * 60 >= minutes), 24)
        if hours == 24:
            return "0 9 * * *"
        return "0 * * * *" if hours == 1 else f"0 */{hours} * * *"
    if minutes < 7 * 1440:
        days = math.ceil(minutes / 1440)
        return "0 9 * * *" if days == 1 else f"0 9 */{days} * *"
    return "0 9 * * 1"


def from_cdio(document: Any, *, min_minutes: int) -> list[Planned]:
    """The watches of a changedetection.io `url-watches.json`; InvalidInput saying what is not."""
    if not isinstance(document, dict) or not isinstance(document.get("watching"), dict):
        raise _refused(
            "This is not a changedetection.io url-watches.json: it has no `watching` object "
            "(export a backup in changedetection.io and upload the url-watches.json in it)."
        )
    watching: dict[str, Any] = document["watching"]
    if len(watching) > MAX_WATCHES:
        raise _refused(f"The file has {len(watching)} watches; import at most {MAX_WATCHES}.")
    found = document.get("settings")
    settings: dict[str, Any] = found if isinstance(found, dict) else {}
    names = _tag_names(settings)
    default = _minutes(_dig(settings, "requests", "time_between_check"), "settings") or (
        CDIO_DEFAULT_MINUTES
    )
    return [
        _cdio_watch(str(key), raw, names, default, min_minutes) for key, raw in watching.items()
    ]


def _cdio_watch(
    key: str, raw: Any, names: dict[str, str], default: int, min_minutes: int
) -> Planned:
    if not isinstance(raw, dict):
        raise _refused(f"Watch {key[:40]} is not an object.")
    url = raw.get("url")
    if not isinstance(url, str) or not _web_url(url):
        raise _refused(f"Watch {key[:40]} has no http(s) `url`.")
    # Files from before the switch have no use_default key: their own interval counts.
    own = raw.get("time_between_check_use_default", False) is False
    minutes = (_minutes(raw.get("time_between_check"), key) if own else None) or default
    titles = (raw.get("title"), raw.get("page_title"))
    title = next((t for t in titles if isinstance(t, str) and t.strip()), url)
    return Planned(
        title=title.strip()[:MAX_TITLE], message=f"what is on {url.strip()}",
        cadence=cron_every(max(minutes, min_minutes)), enabled=raw.get("paused") is not True,
        tags=_tags_of(raw, names),
    )  # fmt: skip


def _minutes(interval: Any, where: str) -> int | None:
    """cdio's {weeks, days, hours, minutes, seconds} (any may be null) in minutes; None: unset."""
    if interval is None:
        return None
    if not isinstance(interval, dict):
        raise _refused(f"`time_between_check` of {where[:40]} is not an object.")
    seconds = 0
    for unit, size in _UNITS.items():
        value = interval.get(unit)
        if value in (None, ""):
            continue
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10_000:
            raise _refused(f"`time_between_check.{unit}` of {where[:40]} is not a small number.")
        seconds += value * size
    return math.ceil(seconds / 60) or None


def _tag_names(settings: dict[str, Any]) -> dict[str, str]:
    tags = _dig(settings, "application", "tags")
    if not isinstance(tags, dict):
        return {}
    found = {}
    for key, tag in list(tags.items())[:MAX_WATCHES]:
        if isinstance(tag, dict) and isinstance(tag.get("title"), str):
            found[str(key)] = tag["title"]
    return found


def _tags_of(raw: dict[str, Any], names: dict[str, str]) -> tuple[str, ...]:
    found: list[str] = []
    listed = raw.get("tags")
    if isinstance(listed, list):
        found += [names[t] for t in listed if isinstance(t, str) and t in names]
    if isinstance(raw.get("tag"), str):  # the older system: "a, b"
        found += raw["tag"].split(",")
    return clean_tags(found)


def clean_tags(tags: list[str]) -> tuple[str, ...]:
    """Trimmed, bounded, without duplicates, in their order."""
    kept: dict[str, None] = {}
    for tag in tags:
        text = " ".join(tag.split())[:MAX_TAG]
        if text:
            kept.setdefault(text, None)
    return tuple(kept)[:MAX_TAGS]


def from_lookout(watches: list[dict[str, Any]]) -> list[Planned]:
    """The watches of a Lookout export (already validated by its schema)."""
    return [
        Planned(
            title=w["title"],
            message=w["message"],
            cadence=w["cadence"],
            timezone=w["timezone"],
            enabled=w["enabled"],
            tags=clean_tags(w["tags"]),
            condition=w["condition"],
            notify=w["notify"],
        )
        for w in watches
    ]


def ignored_keys(document: dict[str, Any]) -> list[str]:
    """The keys of a cdio file's watches that no Lookout field takes (said in the answer)."""
    found: set[str] = set()
    for raw in document.get("watching", {}).values():
        found |= {str(key)[:60] for key in raw} - MAPPED
    return sorted(found)[:MAX_IGNORED]


def _web_url(url: str) -> bool:
    try:
        parts = urllib.parse.urlsplit(url.strip())
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:
        return False
    return len(url) <= MAX_URL and parts.scheme in ("http", "https") and bool(parts.hostname)


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _refused(message: str) -> errors.InvalidInput:
    return errors.InvalidInput(message, fields={"file": [message]})
