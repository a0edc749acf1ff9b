"""What a page says about itself: title, description, language, canonical URL, dates, author.

Read from the parsed page (lexbor) before anything is dropped: <title>, <meta> (name, property,
itemprop, http-equiv), <link rel=canonical>, <html lang>, schema.org JSON-LD and microdata
products. Nothing here is guessed from the text; a value the page does not state is None.

Dates: the <meta> names and JSON-LD keys we read first, then every other name htmldate (the
date library trafilatura uses) knows for a publication or modification date; a value in ISO
8601 as stated, else one written out with its month's name read by dateutil. Measured on
tests/corpus/articles (181 real news and blog pages), 2026-12-07: a publication date for 146 ->
157 pages (modified 132 -> 139), none of the 146 changed; 10 of the 11 new ones on the day
htmldate's own search gives (it also guesses from URLs and text; Forbes states 2019-11-19 in
UTC, the 18th where it is). Of the 24 still without one, 5 have a <time datetime> element (whose
date may be a comment's or a teaser's: not read), 19 nothing we read.

Authors likewise: our <meta> names, JSON-LD (a Person named by @id reference in the graph too),
the other names trafilatura knows, then microdata; tests/corpus (181 articles and 174 WCXB
pages), 2026-12-07: 124 -> 171 pages with an author, languages (xml:lang, Dublin Core, JSON-LD
inLanguage) 320 -> 326; no value read before changed but for six "By " prefixes.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lookout.capabilities import links

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

MAX_TITLE = 1000
MAX_DESCRIPTION = 500
MAX_SHORT = 64  # a language tag or a timestamp
MAX_JSON_LD = 200_000  # bytes of one JSON-LD block worth reading
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][0-9:.]+)?(Z|[+-]\d{2}:?\d{2})?$")
_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s|,|$)", re.IGNORECASE
)
# BCP 47: a primary language of 2-3 letters, then subtags (en, pt-BR, zh-Hant-TW; en_GB as
# og:locale writes it).
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*")
_BY = re.compile(r"^\s*by\s+", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# A day of the month, not an hour or a minute: dateutil fills what a value lacks from today
# ("May 2019" would be read as today's day of May 2019).
_DAY = re.compile(r"(?<![\d:])\d{1,2}(?![\d:])")
_TIME = re.compile(r"\d{1,2}:\d{2}")
_GMT_OFFSET = re.compile(r"\b(?:GMT|UTC)(?=[+-]\d)")
_PUBLISHED = ("article:published_time", "datePublished", "date", "dc.date", "DC.date.issued")
KEYS = ("title", "description", "language", "canonical_url", "published_at", "modified_at",
        "author")  # fmt: skip
_AUTHOR = ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author")
MAX_AUTHOR = 200
MAX_BYLINE = 100  # characters of an author element's text with no name in it
_PRODUCT_TYPES = frozenset(["product", "product.item", "og:product", "productgroup"])
MAX_NAMES = 20  # a product group's variants each have their own
MAX_TYPES = 8  # types an item's itemtype lists, read
MAX_NAME_TRIES = 10  # `name` properties inside a microdata product looked at for its own
MAX_SCOPE_CLIMB = 64  # ancestors climbed from one to the item it belongs to
_MODIFIED = ("article:modified_time", "og:updated_time", "dateModified", "last-modified")


def clip(text: str | None, limit: int) -> str | None:
    """`text` on one line, at most `limit` characters; None if it is empty."""
    if not text:
        return None
    return " ".join(text.split())[:limit] or None


def read(tree: LexborHTMLParser, url: str) -> dict[str, str | None]:
    """The page's metadata; every key is present, None when the page does not say."""
    return read_with_kinds(tree, url)[0]


def read_with_kinds(
    tree: LexborHTMLParser, url: str
) -> tuple[dict[str, str | None], frozenset[str], tuple[str, ...]]:
    """(read(), kinds(), the names it gives its product) from one pass over the page's <meta>
    tags, JSON-LD and microdata products."""
    metas = meta_values(tree)
    objects = list(_ld_objects(tree)) + list(_microdata_products(tree))
    about = _read(tree, url, metas, _json_ld(objects))
    return about, _kinds(metas, objects), _product_names(metas, objects)


def _read(
    tree: LexborHTMLParser, url: str, metas: dict[str, str], ld: dict[str, str]
) -> dict[str, str | None]:
    return {
        "title": title(tree, metas),
        "description": description(metas),
        "language": _language(tree, metas, ld),
        "canonical_url": _canonical(tree, url, metas),
        "published_at": _date(
            [metas.get(k.lower()) for k in _PUBLISHED]
            + [ld.get("published"), ld.get("created")]
            + _named(metas, _published_names())
        ),
        "modified_at": _date(
            [metas.get(k.lower()) for k in _MODIFIED]
            + [ld.get("modified")]
            + _named(metas, _modified_names())
        ),
        "author": _author(
            [metas.get(k.lower()) for k in _AUTHOR]
            + [ld.get("author")]
            + _named(metas, _author_names())
            + [_microdata_author(tree)]
        ),
    }


def _author(candidates: list[str | None]) -> str | None:
    """The first stated author that is a name, not a profile URL, without a leading "By"."""
    for candidate in candidates:
        name = clip(_BY.sub("", candidate or ""), MAX_AUTHOR)
        if name and "://" not in name:
            return name
    return None


@functools.cache
def _author_names() -> frozenset[str]:
    """Every other <meta> name trafilatura knows for an author (NYT's `byl`, Dublin Core's)."""
    from trafilatura import metadata

    return frozenset(metadata.METANAME_AUTHOR) - {key.lower() for key in _AUTHOR}


def _microdata_author(tree: LexborHTMLParser) -> str | None:
    """The first microdata `author` written in the page (not a <meta>): its own `name`
    (_item_name) if it gives one, else its text if that is as short as a name (not an author's
    box)."""
    for node in tree.css("[itemprop~=author]"):
        if node.tag in ("meta", "link"):
            continue
        named = _item_name(node)
        if named is not None:
            return named
        text = " ".join(node.text(separator=" ").split())
        return text if len(text) <= MAX_BYLINE else None
    return None


def empty() -> dict[str, str | None]:
    """The metadata of a page that states none (a text/plain body)."""
    return dict.fromkeys(KEYS)


def title(tree: LexborHTMLParser, metas: dict[str, str] | None = None) -> str | None:
    metas = meta_values(tree) if metas is None else metas
    node = tree.css_first("title")
    heading = tree.css_first("h1")
    for candidate in (
        node.text() if node else None,
        metas.get("og:title"),
        heading.text() if heading else None,
    ):
        clipped = clip(candidate, MAX_TITLE)
        if clipped:
            return clipped
    return None


def description(metas: dict[str, str]) -> str | None:
    return clip(metas.get("description") or metas.get("og:description"), MAX_DESCRIPTION)


def meta_values(tree: LexborHTMLParser) -> dict[str, str]:
    """The first value of each <meta> (and <time itemprop>), keyed by its lowercased
    name / property / itemprop / http-equiv."""
    found: dict[str, str] = {}
    for node in tree.css("meta[content]"):
        attrs = node.attributes
        key = attrs.get("name") or attrs.get("property") or attrs.get("itemprop")
        key = key or attrs.get("http-equiv")
        if key and attrs.get("content"):
            found.setdefault(key.strip().lower(), attrs["content"] or "")
    for node in tree.css("time[itemprop][datetime]"):
        found.setdefault(
            (node.attributes.get("itemprop") or "").lower(), node.attributes.get("datetime") or ""
        )
    return found


def _language(tree: LexborHTMLParser, metas: dict[str, str], ld: dict[str, str]) -> str | None:
    """The first language tag the page states: <html lang> (or xml:lang), the content-language
    and og:locale metas, Dublin Core's, JSON-LD inLanguage. A name ("English") is not a tag."""
    html = tree.css_first("html")
    attributes = html.attributes if html is not None else {}
    for declared in (
        attributes.get("lang"),
        attributes.get("xml:lang"),
        metas.get("content-language"),
        metas.get("og:locale"),
        metas.get("dc.language"),
        metas.get("language"),
        ld.get("language"),
    ):
        tag = clip(declared, MAX_SHORT)
        if tag and _LANGUAGE_TAG.fullmatch(tag):
            return tag.replace("_", "-")
    return None


def _canonical(tree: LexborHTMLParser, url: str, metas: dict[str, str]) -> str | None:
    node = tree.css_first('link[rel="canonical"][href]')
    href = node.attributes.get("href") if node is not None else metas.get("og:url")
    return links.resolve(url, href) if href else None


def _date(candidates: list[str | None]) -> str | None:
    """The first candidate in ISO 8601, as stated; else the first date written out with its
    month's name (RFC 2822 "Mon, 18 Nov 2019 16:07:38 -0600", "November 19, 2019, 07:47 PM
    EST", JavaScript's "Tue Nov 19 2019 03:05:46 GMT+0000"), given in ISO 8601 with its offset
    when it states one (or names UTC / GMT; other zone names are left out, _zone). A date in
    numbers alone other than ISO's (01/02/2019) does not say which is the day and which the
    month: not read."""
    values = [value for candidate in candidates if (value := clip(candidate, MAX_SHORT))]
    for value in values:
        if _DATE.match(value):
            return value
    for value in values:
        if _MONTH.search(value) and _YEAR.search(value) and _DAY.search(value):
            read = _spelled_date(value)
            if read is not None:
                return read
    return None


def _spelled_date(value: str) -> str | None:
    """`value`, a date with its month's name, in ISO 8601 (the day alone if it states no
    time: dateutil would give midnight); None if dateutil cannot read it."""
    from dateutil import parser  # loaded with trafilatura (by htmldate) where pages are read

    # dateutil reads "GMT+0530" POSIX's way (five and a half hours *behind* GMT); a page means
    # what JavaScript wrote: ahead.
    value = _GMT_OFFSET.sub("", value)
    try:
        read: datetime.datetime = parser.parse(value, tzinfos=_zone)
    except (ValueError, OverflowError, TypeError):
        return None
    return read.isoformat() if _TIME.search(value) else read.date().isoformat()


def _zone(name: str | None, offset: int | None) -> datetime.tzinfo | None:
    """The zone of a date dateutil reads: its stated offset, UTC by name; None (the date left
    without one) for a zone name that would be a guess (EST, IST: several places use each)."""
    if offset is not None:
        return datetime.timezone(datetime.timedelta(seconds=offset))
    return datetime.UTC if name in ("UTC", "GMT", "UT", "Z") else None


@functools.cache
def _published_names() -> frozenset[str]:
    """Every other <meta> name htmldate knows for a publication date (loaded with trafilatura:
    by the time a page has a date to read, it is in memory)."""
    from htmldate import core

    return frozenset(core.DATE_ATTRIBUTES) - {key.lower() for key in _PUBLISHED}


@functools.cache
def _modified_names() -> frozenset[str]:
    """Every other <meta> name htmldate knows for a page's last modification."""
    from htmldate import core

    return frozenset(core.PROPERTY_MODIFIED | core.NAME_MODIFIED) - {
        key.lower() for key in _MODIFIED
    }


def _named(metas: dict[str, str], names: frozenset[str]) -> list[str | None]:
    """The values of `metas` under one of `names`, in the page's order."""
    return [value for key, value in metas.items() if key in names]


def _kinds(metas: dict[str, str], objects: Iterable[dict[str, Any]]) -> frozenset[str]:
    og = metas.get("og:type")
    found = {og.strip().lower()} if og else set()
    for item in objects:
        found |= _types(item.get("@type"))
    return frozenset(found)


def _microdata_products(tree: LexborHTMLParser) -> Iterator[dict[str, Any]]:
    """The page's top-level schema.org microdata products (an `itemscope` whose `itemtype` says
    Product or ProductGroup and that is no other item's property), as JSON-LD would give them:
    `@type` and the item's own `name` (its `content`, else its text). A shop that marks its
    product up in microdata (Salesforce Commerce Cloud, WooCommerce before 3.0) says it is a
    product page that way: read without it, a real watch shop's page (WCXB 0586) took
    trafilatura's reading of its reviews and lost the price and the description. Products only:
    read as declared, the sample's microdata forum threads and Q&A pages read worse
    (bench/kinds.py; see content.py). At most MAX_NAMES of them (_product_names keeps no more)."""
    found = 0
    for node in tree.css("[itemscope][itemtype]"):
        if "itemprop" in node.attributes:
            continue  # a property of another item: an offer, a review's product
        types = [
            declared.rstrip("/").rsplit("/", 1)[-1]
            for declared in (node.attributes.get("itemtype") or "").split()[:MAX_TYPES]
        ]
        if not _PRODUCT_TYPES.isdisjoint(_types(types)):
            yield {"@type": types, "name": _item_name(node)}
            found += 1
            if found == MAX_NAMES:
                return


def _item_name(item: LexborNode) -> str | None:
    """The `name` property of the microdata item `item` itself, not of an item inside it.
    Bounded: the first MAX_NAME_TRIES `name` properties inside it are looked at, each climbing
    at most MAX_SCOPE_CLIMB ancestors to the item it belongs to (a made page of 20,000 names 3,000
    levels under a nested item took minutes when each climbed all the way)."""
    own = item.mem_id  # lexbor's node; == would compare the two nodes' HTML
    for node in item.css("[itemprop~=name]")[:MAX_NAME_TRIES]:
        scope = node.parent
        for _ in range(MAX_SCOPE_CLIMB):
            if scope is None or scope.mem_id == own or "itemscope" in scope.attributes:
                break
            scope = scope.parent
        if scope is not None and scope.mem_id == own:
            return node.attributes.get("content") or node.text(separator=" ")
    return None


def _product_names(metas: dict[str, str], objects: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """The `name` of each schema.org Product / ProductGroup, and og:title when og:type says
    product: what a product page says its product is called."""
    names = [
        item["name"]
        for item in objects
        if isinstance(item.get("name"), str)
        and not _PRODUCT_TYPES.isdisjoint(_types(item.get("@type")))
    ]
    if (metas.get("og:type") or "").strip().lower() in _PRODUCT_TYPES and metas.get("og:title"):
        names.append(metas["og:title"])
    return tuple(dict.fromkeys(name for name in names if name.strip()))[:MAX_NAMES]


def _types(declared: Any) -> set[str]:
    kinds = declared if isinstance(declared, list) else [declared]
    return {kind.strip().lower() for kind in kinds if isinstance(kind, str)}


def _json_ld(objects: Iterable[dict[str, Any]]) -> dict[str, str]:
    """datePublished / dateModified / dateCreated / inLanguage / author of the page's schema.org
    objects, first wins."""
    found: dict[str, str] = {}
    # A Yoast graph names its author by reference: {"author": {"@id": ".../#/schema/person/1"}}.
    people = {
        item["@id"]: item["name"]
        for item in objects
        if isinstance(item.get("@id"), str) and isinstance(item.get("name"), str)
    }
    for item in objects:
        for key, name in (
            ("datePublished", "published"),
            ("dateModified", "modified"),
            ("dateCreated", "created"),
            ("inLanguage", "language"),
        ):
            if isinstance(item.get(key), str):
                found.setdefault(name, item[key])
        if (author := _ld_author(item.get("author"), people)) is not None:
            found.setdefault("author", author)
    return found


def _ld_author(value: Any, people: dict[str, str]) -> str | None:
    """schema.org `author`: a name, a Person/Organization object (or a reference to one in the
    page's graph, by its @id), or a list of them."""
    if isinstance(value, list):
        names = [name for item in value[:5] if (name := _ld_author(item, people))]
        return ", ".join(names) or None
    if isinstance(value, dict):
        reference = value.get("@id")
        value = value.get("name") or (people.get(reference) if isinstance(reference, str) else None)
    return value if isinstance(value, str) and value.strip() else None


def _ld_objects(tree: LexborHTMLParser) -> Iterator[dict[str, Any]]:
    for node in tree.css('script[type="application/ld+json"]'):
        source = node.text()
        if len(source) > MAX_JSON_LD:
            continue
        try:
            # strict=False: a raw line break or tab inside a string (a headline pasted in
            # whole) is an error to JSON, not to the page's writer.
            data = json.loads(source, strict=False)
        except ValueError:
            continue
        yield from _objects(data, depth=0)


def _objects(data: Any, depth: int) -> Iterator[dict[str, Any]]:
    """Every JSON object in `data` (lists and @graph unpacked), at most a few levels down."""
    if depth > 3:
        return
    if isinstance(data, list):
        for item in data:
            yield from _objects(item, depth + 1)
    elif isinstance(data, dict):
        yield data
        yield from _objects(data.get("@graph"), depth + 1)
