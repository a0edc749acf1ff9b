"""Reading robots.txt and sitemaps (XML, sitemap indexes, gzip, plain-text lists). Pure, no I/O.

robots.txt goes through Protego (Scrapy's parser): it knows the `*` and `$` wildcards of RFC 9309,
which the standard library's urllib.robotparser reads as literal characters (it allowed /x.pdf
under `Disallow: /*.pdf$` and /search?q under `Disallow: /search*`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from protego import Protego

from lookout.capabilities import inflate, links

if TYPE_CHECKING:
    from lxml import etree

_GZIP_MAGIC = b"\x1f\x8b"


@dataclasses.dataclass(frozen=True)
class Sitemap:
    sitemaps: list[str]  # nested sitemaps, from a sitemap index
    pages: list[str]
    lastmod: dict[str, str] = dataclasses.field(default_factory=dict)  # page -> its <lastmod>


@dataclasses.dataclass(frozen=True)
class Robots:
    sitemaps: list[str]
    parser: Protego

    def allows(self, user_agent: str, url: str) -> bool:
        return bool(self.parser.can_fetch(url, user_agent))


def parse_robots(text: str, base: str) -> Robots:
    """The Sitemap lines and the rules of a robots.txt found at `base`."""
    parser = Protego.parse(text)
    found = [links.resolve(base, line) for line in parser.sitemaps]
    return Robots(sitemaps=[url for url in found if url], parser=parser)


def no_robots() -> Robots:
    """What a site without a readable robots.txt means: no sitemaps named, everything allowed."""
    return parse_robots("", "http://invalid/")


def parse_sitemap(body: bytes, *, base: str, max_bytes: int) -> Sitemap:
    """The nested sitemaps and page URLs in `body`; gzip is unpacked, at most `max_bytes` of it.

    Raises inflate.TooLarge or inflate.BadEncoding for a gzip body that is too big or broken.
    """
    if body.startswith(_GZIP_MAGIC):
        inflater = inflate.Inflater("gzip", max_bytes)
        inflater.feed(body)
        body = inflater.finish()
    if body.lstrip()[:1] == b"<":
        return _parse_xml(body, base)
    lines = body.decode("utf-8", errors="replace").splitlines()
    # A text sitemap is absolute URLs only; anything else on a line is not one.
    found = (links.normalize(line) for line in lines if "://" in line)
    return Sitemap(sitemaps=[], pages=list(dict.fromkeys(url for url in found if url)))


def _parse_xml(body: bytes, base: str) -> Sitemap:
    from lxml import etree  # at the first XML sitemap read

    # No entities, no network, and recover from the malformed XML that real sitemaps often are.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True, huge_tree=False)
    try:
        root = etree.fromstring(body, parser=parser)
    except etree.XMLSyntaxError:
        return Sitemap(sitemaps=[], pages=[])
    if root is None:
        return Sitemap(sitemaps=[], pages=[])
    nested: list[str] = []
    pages: list[str] = []
    lastmod: dict[str, str] = {}
    for loc in root.iter("{*}loc", "loc"):
        parent = loc.getparent()
        kind = etree.QName(parent).localname if parent is not None else ""
        target = nested if kind == "sitemap" else pages if kind == "url" else None
        if target is not None and loc.text:
            target.append(loc.text)
        if kind == "url" and loc.text and (stamp := _lastmod(parent)) is not None:
            lastmod[loc.text] = stamp
    found = _urls(base, pages)
    resolved = {links.resolve(base, raw): stamp for raw, stamp in lastmod.items()}
    stamps = {url: resolved[url] for url in found if url in resolved}
    return Sitemap(sitemaps=_urls(base, nested), pages=found, lastmod=stamps)


def _lastmod(entry: etree._Element | None) -> str | None:
    """A <url>'s <lastmod> (W3C datetime, kept as written, bounded), or None."""
    if entry is None:
        return None
    for child in entry.iterchildren("{*}lastmod", "lastmod"):
        text = (child.text or "").strip()
        return text[:40] if text else None
    return None


def _urls(base: str, candidates: list[str]) -> list[str]:
    found = (links.resolve(base, candidate) for candidate in candidates)
    return list(dict.fromkeys(url for url in found if url))
