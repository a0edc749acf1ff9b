"""A page's markdown as lines: what a person reads of each, and a key that compares only that.

The key keeps every word, number, time, date and version of a line (those are content) and drops
what is not: markdown markup (heading, quote and bullet markers, emphasis, escapes, table
padding), generated ordered-list numbers, link titles and fragments, tracking, session and
cache-busting parameters of link URLs, image URLs when the image has alt text, and relative-time
phrases ("5 minutes ago", "just now"). Case is kept: "apple" → "Apple" is an edit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import re
import unicodedata
import urllib.parse

_WS = re.compile(r"\s+")
_FENCE = re.compile(r"^(?:`{3,}|~{3,})")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
# Block markers: quotes, a heading, a bullet (with a task box), or an ordered-list number.
_BLOCK = re.compile(r"^(?:>\s?)*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|(\d{1,9})[.)]\s+)?")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_BARE_URL = re.compile(r"\bhttps?://[^\s<>()\[\]]+")
_STRONG = re.compile(r"\*\*+|__+|~~+")
_EMPHASIS = re.compile(r"(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
_CODE = re.compile(r"`+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")
_UNITS = (
    r"s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?|mos?|months?|"
    r"y|yrs?|years?|sekunden?|minuten?|stunden?|tagen?|minutes?|heures?|jours?"
)
_RELATIVE = re.compile(
    rf"\b(?:(?:\d+|an?|one|a few|few|several)\s*(?:{_UNITS})\.?\s+ago"
    rf"|vor\s+\d+\s*(?:{_UNITS})|il y a\s+\d+\s*(?:{_UNITS})"
    r"|just now|moments? ago|a moment ago|seconds ago)\b",
    re.IGNORECASE,
)
_TRACKING = frozenset(
    [
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "igshid",
        "mkt_tok",
        "_hsenc",
        "_hsmi",
        "__hssc",
        "__hstc",
        "__hsfp",
        "hsctatracking",
        "_ga",
        "_gl",
        "_ke",
        "spm",
        "vero_id",
        "vero_conv",
        "oly_enc_id",
        "oly_anon_id",
        "rb_clickid",
        "s_cid",
        "wt_mc",
        "ncid",
        "cmpid",
        "icid",
        "ocid",
        "sr_share",
        "trk",
        "trkcampaign",
        "ref_src",
        "ref_url",
        "sessionid",
        "session_id",
        "sessid",
        "sid",
        "phpsessid",
        "jsessionid",
        "aspsessionid",
        "cfid",
        "cftoken",
    ]
)
_BUSTERS = frozenset(
    [
        "_",
        "cb",
        "cachebuster",
        "cachebust",
        "cache",
        "nocache",
        "bust",
        "ts",
        "timestamp",
        "t",
        "time",
        "v",
        "ver",
        "rnd",
        "rand",
        "random",
        "r",
        "_t",
        "_v",
        "_r",
    ]
)
_PATH_SESSION = re.compile(r";(?:jsessionid|sessionid|phpsessid)=[^/?#]*", re.IGNORECASE)
_NUMERIC = re.compile(r"^\d{1,20}$")
_HEX_TOKEN = re.compile(r"^[0-9a-f]{16,}$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Line:
    """One line of a page: `text` as a person reads it (with its list number, if any),
    `key` what is compared."""

    raw: str
    text: str
    key: str

    @property
    def hash(self) -> str:
        return key_hash(self.key)


def key_hash(key: str) -> str:
    """A short stable hash of a key: what is remembered of lines beyond the kept text."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def split(markdown: str) -> list[str]:
    """The markdown's lines worth comparing, whitespace collapsed (raw markdown otherwise)."""
    out = []
    for raw in markdown.splitlines():
        line = _WS.sub(" ", raw).strip()
        if line and not _FENCE.match(line) and not _TABLE_RULE.match(line):
            out.append(line)
    return out


def parse(raw: str) -> Line | None:
    """The line's readable text and key; None for a line with nothing to read (a rule, markup)."""
    block = _BLOCK.match(raw)
    number = block.group(1) if block else None
    body = raw[block.end() :] if block else raw
    urls: list[str] = []
    body = _IMAGE.sub(lambda m: _image(m, urls), body)
    body = _LINK.sub(lambda m: _link(m, urls), body)
    text = readable(body)
    if not any(ch.isalnum() for ch in text):
        return None
    core = _RELATIVE.sub("<ago>", _BARE_URL.sub(lambda m: canonical_url(m.group(0)), text))
    key = core + (" ⟨" + " ".join(urls) + "⟩" if urls else "")
    shown = f"{number}. {text}" if number else text
    return Line(raw=raw, text=shown, key=key)


def parse_all(raws: list[str]) -> list[Line]:
    return [line for raw in raws if (line := parse(raw)) is not None]


def readable(body: str) -> str:
    """Inline markdown as plain text: no emphasis, code ticks, escapes, tags, entities; table
    cells joined by " | "; single spaces."""
    if body.startswith("|") and body.endswith("|"):
        body = " | ".join(cell.strip() for cell in body.strip("|").split("|"))
    body = _CODE.sub("", _STRONG.sub("", body))
    body = _EMPHASIS.sub("", body)
    body = _ESCAPE.sub(r"\1", _TAG.sub("", body))
    body = unicodedata.normalize("NFKC", html.unescape(body))
    return _WS.sub(" ", body).strip()


def _image(match: re.Match[str], urls: list[str]) -> str:
    alt = match.group(1).strip()
    if alt:
        return f"[image: {alt}]"
    # No alt text: the file's name is what tells one image from another (its host, size
    # folders and query are a CDN's business).
    name = urllib.parse.urlsplit(match.group(2)).path.rsplit("/", 1)[-1]
    return f"[image: {name}]" if name else "[image]"


def _link(match: re.Match[str], urls: list[str]) -> str:
    target = match.group(2)
    if target and not target.startswith(("javascript:", "#")):
        urls.append(canonical_url(target))
    return match.group(1)


def canonical_url(url: str) -> str:
    """The URL without what never tells pages apart: fragment, tracking parameters (utm_*,
    mc_*, fbclid, gclid…), session ids and numeric cache busters."""
    try:
        parts = urllib.parse.urlsplit(_PATH_SESSION.sub("", url))
    except ValueError:
        return url
    kept = [
        (name, value)
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if not _noise_param(name, value)
    ]
    query = urllib.parse.urlencode(kept)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, query, ""))


def _noise_param(name: str, value: str) -> bool:
    lowered = name.lower()
    if lowered.startswith(("utm_", "mc_", "pk_", "mtm_", "itm_", "hsa_")) or lowered in _TRACKING:
        return True
    if "sessid" in lowered or lowered.endswith("sessionid"):
        return True
    return lowered in _BUSTERS and bool(_NUMERIC.match(value) or _HEX_TOKEN.match(value))
