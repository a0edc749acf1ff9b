"""Links: resolving, normalizing and collecting them, so one page has one spelling."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser

MAX_URL = 2048
MAX_ANCHOR = 300
_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Schemes whose link runs code, or opens a document the page carries, where it is followed.
_EXECUTABLE = ("javascript:", "vbscript:", "data:")
# What a browser strips from an href before reading its scheme (the URL standard): C0 controls
# and spaces around it, tabs and newlines anywhere ("java\tscript:" is javascript:).
_AROUND = "".join(chr(code) for code in range(0x21))
_INSIDE = str.maketrans("", "", "\t\n\r")


def normalize(url: str) -> str | None:
    """`url` with scheme and host lowercased, default port and fragment dropped; None unless it
    is an absolute http(s) URL of at most 2048 characters."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in _SCHEMES or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    normal = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    return normal if len(normal) <= MAX_URL else None


def resolve(base: str, href: str) -> str | None:
    """`href` as found in a page at `base`, absolute and normalized; None if not a web link."""
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    try:
        return normalize(urljoin(base, href))
    except ValueError:
        return None


def executable(href: str) -> bool:
    """Whether following `href` runs code or opens an inline document, read as a browser reads
    it: a page's content keeps such a link's text, not the link (a reader of its markdown or
    HTML could run it)."""
    return href.strip(_AROUND).translate(_INSIDE).lower().startswith(_EXECUTABLE)


def base_url(tree: LexborHTMLParser, url: str) -> str:
    """The URL relative links resolve against: the page's <base href> if it has one."""
    node = tree.css_first("base[href]")
    href = node.attributes.get("href") if node else None
    return (resolve(url, href) if href else None) or url


def page_links(tree: LexborHTMLParser, base: str, limit: int) -> list[tuple[str, str]]:
    """(absolute URL, anchor text) of each distinct link, in page order, at most `limit`."""
    seen: dict[str, str] = {}
    for node in tree.css("a[href]"):
        url = resolve(base, node.attributes.get("href") or "")
        if url is not None and url not in seen:
            seen[url] = " ".join(node.text().split())[:MAX_ANCHOR]
            if len(seen) >= limit:
                break
    return list(seen.items())


def absolutize(tree: LexborHTMLParser, base: str) -> None:
    """Rewrite href and src attributes in place so the HTML stands on its own."""
    for attribute in ("href", "src"):
        for node in tree.css(f"[{attribute}]"):
            value = node.attributes.get(attribute)
            absolute = resolve(base, value) if value else None
            if absolute is not None:
                node.attrs[attribute] = absolute
