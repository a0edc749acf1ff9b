"""URLs in plain text: found, cleaned of surrounding punctuation and normalized (pure, no I/O).

`example.com/path` becomes `https://example.com/path`; the scheme and host are lower-cased, a
default port and a lone root `/` are dropped, the path and query are kept byte for byte. Hosts
stay in Unicode (`bücher.de`), so what the user typed is what they read back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

# Characters that end a URL in running text: whitespace, quotes and brackets that never occur
# unescaped in URLs people paste, plus full-width CJK punctuation (no space follows it).
_STOP = (
    '\\s<>"`{}|\\\\^'
    "\u3002\uff0c\u3001\uff1b\uff1a\uff01\uff1f\u300c\u300d\u300e\u300f\uff08\uff09\u3010\u3011"
)
_WITH_SCHEME = re.compile(rf"(?i)\bhttps?://[^{_STOP}]+")
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_BARE = re.compile(
    rf"(?<![\w@./:-])(?:{_LABEL}\.)+(?:[^\W\d_]{{2,63}}|xn--[a-z0-9-]+)"
    rf"(?::\d{{2,5}})?(?:[/?#][^{_STOP}]*)?(?![\w@])"
)
# A bare `word.word` is a URL only with a TLD people actually type; otherwise `report.py`,
# `node.js` or `readme.md` (Paraguay, Moldova) would be fetched.
_BARE_TLDS = frozenset({
    "com", "org", "net", "edu", "gov", "io", "co", "ai", "app", "dev", "info", "biz", "me", "tv",
    "us", "uk", "de", "nl", "fr", "es", "it", "eu", "ca", "au", "nz", "jp", "cn", "kr", "in", "br",
    "mx", "ar", "ch", "at", "be", "se", "no", "dk", "fi", "pl", "cz", "pt", "ie", "ru", "ua", "gr",
    "tr", "il", "za", "sg", "hk", "tw", "id", "my", "ph", "th", "vn", "ae", "sa", "ro", "hu", "sk",
    "si", "hr", "bg", "lt", "lv", "ee", "lu", "cl", "pe", "ng", "ke", "eg", "xyz", "site", "online",
    "store", "shop", "blog", "news", "tech", "cloud", "page", "ly", "gg", "fm", "ws", "cc", "la",
    "live", "world", "today", "space", "website", "link", "club", "design", "agency", "media",
    "studio", "digital", "email", "systems", "solutions", "network", "tools", "software", "games",
    "wiki", "fyi",
})  # fmt: skip
_TRAILING = ".,;:!?'\"*_~)]\u2026\u00bb\u201d\u2019"
_CLOSERS = {")": "(", "]": "["}
_DEFAULT_PORTS = {"http": 80, "https": 443}
# `a.com/x,https://b.com/y`: a comma or semicolon glued to a new scheme starts a new URL;
# anywhere else `https://` inside a path is real (web.archive.org/web/2020/https://...).
_GLUED = re.compile(r"[,;](?=https?://)", re.IGNORECASE)


def extract(text: str) -> tuple[str, ...]:
    """Every URL in `text`, normalized, duplicates removed, in order of first appearance."""
    return tuple(dict.fromkeys(url for _, _, url in spans(text)))


def spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, normalized url) for each URL in `text`, in order; overlaps resolved."""
    found: list[tuple[int, int, str]] = []
    taken_until = -1
    for start, _end, raw in sorted(_candidates(text)):
        if start < taken_until:
            continue
        cleaned = _strip_trailing(raw)
        url = _settled(cleaned)
        if url is not None:
            found.append((start, start + len(cleaned), url))
            taken_until = start + len(raw)
    return found


def normalize(raw: str) -> str | None:
    """The canonical form of one URL, or None when it is not an http(s) URL with a host."""
    if "://" not in raw[:10]:
        raw = "https://" + raw
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in _DEFAULT_PORTS or not _plausible_host(host):
        return None
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    if ":" in host:
        netloc = f"[{host}]" if port is None else f"[{host}]:{port}"
    path = "" if parts.path == "/" and not parts.query and not parts.fragment else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


def _settled(cleaned: str) -> str | None:
    # Normalizing can bare a new trailing character ("a.com/_#" -> "https://a.com/_"); strip
    # again until the URL reads back as itself.
    url = normalize(cleaned)
    while url is not None and _strip_trailing(url) != url:
        url = normalize(_strip_trailing(url))
    return url


def _candidates(text: str) -> Iterator[tuple[int, int, str]]:
    for match in _WITH_SCHEME.finditer(text):
        yield from _split_glued(match.start(), match.group())
    for match in _BARE.finditer(text):
        if _bare_is_url(match.group()):
            yield match.start(), match.end(), match.group()


def _split_glued(start: int, raw: str) -> Iterator[tuple[int, int, str]]:
    offset = 0
    for piece in _GLUED.split(raw):
        yield start + offset, start + offset + len(piece), piece
        offset += len(piece) + 1


def _bare_is_url(raw: str) -> bool:
    host = re.split(r"[:/?#]", raw, maxsplit=1)[0].lower()
    tld = host.rsplit(".", 1)[-1]
    known = tld in _BARE_TLDS or tld.startswith("xn--") or not tld.isascii()
    return known or host.startswith("www.")


def _strip_trailing(raw: str) -> str:
    while raw:
        if raw[-2:].lower() in ("'s", "\u2019s"):
            raw = raw[:-2]
            continue
        last = raw[-1]
        if last not in _TRAILING:
            break
        opener = _CLOSERS.get(last)
        if opener is not None and raw.count(opener) >= raw.count(last):
            break
        raw = raw[:-1]
    return raw


def _plausible_host(host: str) -> bool:
    if not host or host.startswith(".") or ".." in host:
        return False
    return "." in host or ":" in host or host == "localhost"
