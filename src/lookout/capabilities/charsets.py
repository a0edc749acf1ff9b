"""Bodies to text: BOM, then the declared charset, then <meta>, then UTF-8, then cp1252."""

from __future__ import annotations

import codecs
import re

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# WHATWG: browsers read these labels as windows-1252, and so do pages written for browsers.
_AS_WINDOWS_1252 = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii"})
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)
_SNIFF_BYTES = 4096


def decode(body: bytes, declared: str | None = None) -> str:
    """The text of `body`, decoded the way a browser would pick the encoding."""
    for label in (_bom(body), declared, _meta(body)):
        codec = _codec(label)
        if codec is not None:
            return body.decode(codec, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace")


def _bom(body: bytes) -> str | None:
    return next((codec for bom, codec in _BOMS if body.startswith(bom)), None)


def _meta(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:_SNIFF_BYTES])
    return match.group(1).decode("ascii", errors="replace") if match else None


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    if label in _AS_WINDOWS_1252:
        return "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None
