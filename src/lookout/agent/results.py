"""Watches over results, not pages: a web search, a site's discovered URLs, a maps search.

Each result is an item with an identity (its URL without tracking parameters, or the place's
reference) and a line saying its fields; new and removed items are added and removed, an item
whose fields changed is modified (rating, review count, opening hours, price level…). A
result's rank is left out: search and maps rankings shift between calls without anything new.
"""

from __future__ import annotations

import hashlib
from typing import Any

from lookout.agent import diffing, lines, marking
from lookout.capabilities import registry

MAX_ITEMS = 200
ITEM_CHARS = 400


def key_of(verb: str, arguments: dict[str, Any]) -> str:
    """Where a results snapshot is kept in the thread state, per verb and question."""
    said = " ".join(f"{name}={arguments[name]}" for name in sorted(arguments) if name != "limit")
    return f"{verb}: {said}"[:500]


def entry(verb: str, output: dict[str, Any]) -> dict[str, Any]:
    """A results snapshot: {identity: line}, bounded."""
    if registry.reads_as(verb) == "places":
        found = {str(place["place_ref"]): place_line(place) for place in output.get("places") or []}
    else:
        found = {
            lines.canonical_url(str(link["url"])): link_line(link, verb, output)
            for link in output.get("links") or []
        }
    items = dict(list(found.items())[:MAX_ITEMS])
    digest = hashlib.sha256(repr(sorted(items.items())).encode("utf-8")).hexdigest()[:32]
    return {"v": diffing.VERSION, "kind": "items", "items": items, "digest": digest}


def link_line(link: dict[str, Any], verb: str, output: dict[str, Any]) -> str:
    title = " ".join(str(link.get("title") or "").split())
    url = lines.canonical_url(str(link["url"]))
    if output.get("source") == "search" and title:
        return f"{title} — {url}"[:ITEM_CHARS]
    return url[:ITEM_CHARS]  # a site's URLs: a link's anchor text varies from page to page


def place_line(place: dict[str, Any]) -> str:
    """A place's fields in words, the order fixed so that only a value change reads as one."""
    said = [str(place.get("name") or "a place")]
    if place.get("address"):
        said.append(str(place["address"]))
    if place.get("category"):
        said.append(str(place["category"]))
    if place.get("rating") is not None:
        said.append(f"rated {place['rating']}")
    if place.get("reviews_count") is not None:
        said.append(f"{place['reviews_count']} reviews")
    if place.get("price_level") is not None:
        said.append(f"price level: {place['price_level']}")
    if place.get("opening_hours"):
        said.append(f"opening hours: {place['opening_hours']}")
    return " — ".join(said)[:ITEM_CHARS]


def fields_changed(before: str, after: str) -> tuple[str, str, list[str]]:
    """(before, after) without their labelled fields, and each labelled field that changed in
    words: "opening hours changed: Mon 09:00-18:00 → 10:00-18:00", "price level changed:
    moderate → expensive". No labelled field changed: ([], the lines as they are)."""
    old, new = _labelled(before), _labelled(after)
    out = []
    for label in _LABELS:
        was, now = old[1].get(label), new[1].get(label)
        if was == now:
            continue
        if label == "opening hours" and was and now:
            detail = _days_changed(was, now)
        else:
            detail = f"{was or 'not given'} → {now or 'not given'}"
        out.append(f"{label} changed: {detail}")
    return (old[0], new[0], out) if out else (before, after, [])


_LABELS = ("opening hours", "price level")


def _labelled(line: str) -> tuple[str, dict[str, str]]:
    rest, labelled = [], {}
    for part in line.split(" — "):
        label, colon, value = part.partition(": ")
        if colon and label in _LABELS:
            labelled[label] = value
        else:
            rest.append(part)
    return " — ".join(rest), labelled


def _days_changed(was: str, now: str) -> str:
    """The days whose hours changed: "Mon 09:00-18:00 → 10:00-18:00; Sun closed → 10:00-14:00"."""
    old = dict(day.partition(" ")[::2] for day in was.split(", "))
    new = dict(day.partition(" ")[::2] for day in now.split(", "))
    days = [
        day for day in [*new, *(d for d in old if d not in new)] if old.get(day) != new.get(day)
    ]
    if not days or not set(old) & set(new):  # not a day-by-day list
        return f"{was} → {now}"
    return "; ".join(f"{day} {old.get(day) or 'not given'} → {new.get(day) or 'not given'}"
                     for day in days)  # fmt: skip


def compare(prior: dict[str, Any], current: dict[str, Any]) -> list[diffing.Change]:
    """New, removed and changed items (in the order of the new results, then the old)."""
    old: dict[str, str] = dict(prior.get("items") or {})
    new: dict[str, str] = dict(current.get("items") or {})
    out = []
    for ident, line in new.items():
        was = old.get(ident)
        signature = hashlib.blake2b(ident.encode("utf-8"), digest_size=8).hexdigest()
        if was is None:
            out.append(diffing.Change("added", None, line, "a:" + signature))
        elif was != line:
            shape = marking.template(was, line)
            out.append(diffing.Change("modified", was, line, "m:" + lines.key_hash(shape)))
    for ident, line in old.items():
        if ident not in new:
            signature = hashlib.blake2b(ident.encode("utf-8"), digest_size=8).hexdigest()
            out.append(diffing.Change("removed", line, None, "r:" + signature))
    order = {"modified": 0, "added": 1, "removed": 2}
    return sorted(out, key=lambda change: order[change.kind])
