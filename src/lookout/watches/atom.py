"""The Atom document of a feed: pure, values in, bytes out.

Written with feedgen (maintained, builds on lxml, which we already ship). Measured against a
hand-written ElementTree version: same output size, and feedgen checks what RFC 4287 requires
(id, title, updated on the feed and on every entry) and escapes every text for us.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

CONTENT_TYPE = "application/atom+xml"
MAX_TEXT = 4000


@dataclasses.dataclass(frozen=True)
class Entry:
    id: uuid.UUID
    title: str
    updated: dt.datetime
    text: str
    link: str | None


@dataclasses.dataclass(frozen=True)
class Feed:
    id: uuid.UUID
    title: str
    subtitle: str
    self_url: str | None
    home_url: str | None
    entries: list[Entry]


def document(feed: Feed, *, now: dt.datetime) -> bytes:
    """The feed as Atom 1.0 XML, newest entry first."""
    from feedgen.feed import FeedGenerator  # loaded when a feed is read, not at every start

    generator = FeedGenerator()
    generator.id(f"urn:uuid:{feed.id}")
    generator.title(feed.title)
    generator.subtitle(feed.subtitle)
    generator.generator("Lookout")
    if feed.self_url:
        generator.link(href=feed.self_url, rel="self", type=CONTENT_TYPE)
    if feed.home_url:
        generator.link(href=feed.home_url, rel="alternate", type="text/html")
    generator.updated(max((entry.updated for entry in feed.entries), default=now))
    for entry in feed.entries:
        added = generator.add_entry(order="append")
        added.id(f"urn:uuid:{entry.id}")
        added.title(entry.title)
        added.updated(entry.updated)
        added.content(entry.text[:MAX_TEXT], type="text")
        if entry.link:
            added.link(href=entry.link, rel="alternate", type="text/html")
    data: bytes = generator.atom_str(pretty=True)
    return data
