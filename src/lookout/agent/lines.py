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
_STARTS_BLOCK = re.compile(r"^(?:>|#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|\|)")
_LIST_MARK = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
# Block markers: quotes, a heading, a bullet (with a task box), or an ordered-list number.
_BLOCK = re.compile(r"^(?:>\s?)*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|(\d{1,9})[.)]\s+)?")
# A link target: <…> (may hold spaces), or a URL with balanced parentheses in it. No "<" inside
# <…> (CommonMark's rule): with one, a line of "[](<" repeated was scanned to its end from each.
# Spaces are taken whole ("*+"), the title's lead space checked behind: "[](" and spaces split
# them every way between the URL's side and the title's.
_TARGET = r"\(\s*+(?:<([^<>]*)>|((?:[^()\s]|\([^()\s]*\))*))(?:\s*+(?<=\s)\"[^\"]*\")?\s*+\)"
_LABEL = r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"  # one level of brackets inside: "[a [b] c]"
_IMAGE = re.compile(r"!" + _LABEL + _TARGET)
_LINK = re.compile(_LABEL + _TARGET)
_BARE_URL = re.compile(r"\bhttps?://[^\s<>()\[\]]+")
_STRONG = re.compile(r"\*\*+|__+|~~+")
_EMPHASIS = re.compile(r"(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
_CODE = re.compile(r"`+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
# Inline HTML that html-to-markdown may pass through; not "<The Palace: a play>" in a text.
_KEPT = 0xF0000  # escaped characters while emphasis is removed: a private-use plane
_KEPT_RANGE = "[\U000f0000-\U000f007f]"
_TAG = re.compile(
    r"</?(?:a|abbr|b|bdi|bdo|big|br|cite|code|del|dfn|em|font|i|img|ins|kbd|mark|q|s|samp|"
    r"small|span|strike|strong|sub|sup|time|tt|u|var|wbr)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
# Units a page's "… ago" moves by between checks; "10 years ago" in an article is content.
_UNITS = (
    r"s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|"
    r"sekunden?|minuten?|stunden?|tagen?|minutes?|heures?|jours?"
)
_RELATIVE = re.compile(
    rf"\b(?:(?:\d+|an?|one|a few|few|several)\s*(?:{_UNITS})\.?\s+ago"
    rf"|vor\s+\d+\s*(?:{_UNITS})|il y a\s+\d+\s*(?:{_UNITS})"
    r"|just now|moments? ago|a moment ago|seconds ago)\b",
    re.IGNORECASE,
)
_RELATIVE_HINTS = ("ago", "now", "vor ", "il y a")
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
        # Without its spaces: re-indented HTML can make html-to-markdown drop the space
        # between two inline elements ("President Trump" → "PresidentTrump").
        return key_hash("".join(self.key.split()))


def key_hash(key: str) -> str:
    """A short stable hash of a key: what is remembered of lines beyond the kept text."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def split(markdown: str) -> list[str]:
    """The markdown's blocks worth comparing, one line each, whitespace collapsed: a paragraph's
    soft line breaks are spaces (markdown's own rule; html-to-markdown keeps the source's
    newlines inside a paragraph, so re-indented HTML moved them); a hard break (<br>), a list
    item, a heading, a quote line and a table row each stand alone; code keeps its lines."""
    out: list[str] = []
    para: list[str] = []
    fenced = False

    def flush() -> None:
        if para:
            out.append(" ".join(para))
            para.clear()

    broken = False  # the previous line ended in a hard break, inside a paragraph
    for raw in markdown.splitlines():
        line = _WS.sub(" ", raw).strip()
        if _FENCE.match(line):
            flush()
            fenced = not fenced
        elif fenced or not line or _TABLE_RULE.match(line):
            flush()
            if fenced and line:
                out.append(line)
        else:
            if broken and _LIST_MARK.match(line):
                # "5) Le Dodici Case" after a <br> is the text's own number: html-to-markdown
                # escapes such a number only at the start of a block.
                line = re.sub(r"^(\d{1,9})(?=[.)])|^(?=[-*+])", r"\1\\", line, count=1)
            elif _STARTS_BLOCK.match(line):
                flush()
            para.append(line[:-1].rstrip() if line.endswith("\\") else line)
            if raw.endswith(("  ", "\\")) or line.startswith(("#", "|")):
                flush()
        broken = bool(line) and raw.endswith(("  ", "\\")) and not _LIST_MARK.match(line)
    flush()
    return out


def parse(raw: str) -> Line | None:
    """The line's readable text and key; None for a line with nothing to read (a rule, markup)."""
    block = _BLOCK.match(raw)
    number = block.group(1) if block else None
    body = raw[block.end() :] if block else raw
    urls: list[str] = []
    if "](" in body:  # each regex only where its mark is: a page has thousands of lines
        body = _IMAGE.sub(lambda m: _image(m, urls), body) if "![" in body else body
        body = _LINK.sub(lambda m: _link(m, urls), body)
    text = readable(body)
    if not any(ch.isalnum() for ch in text):
        return None
    core = text
    if "://" in core:
        core = _BARE_URL.sub(lambda m: canonical_url(m.group(0)), core)
    lowered = core.lower()
    if any(word in lowered for word in _RELATIVE_HINTS):
        core = _RELATIVE.sub("<ago>", core)
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
    escaped = "\\" in body
    if escaped:  # an escaped "\*" is a character of the text, not emphasis: kept aside
        body = _ESCAPE.sub(lambda m: chr(_KEPT + ord(m.group(1))), body)
    if "`" in body or "*" in body or "_" in body or "~" in body:
        body = _EMPHASIS.sub("", _CODE.sub("", _STRONG.sub("", body)))
    if "<" in body:
        body = _TAG.sub("", body)
    if escaped:
        body = re.sub(_KEPT_RANGE, lambda m: chr(ord(m.group(0)) - _KEPT), body)
    if "&" in body:
        body = html.unescape(body)
    if not body.isascii():
        body = unicodedata.normalize("NFKC", body)
    return _WS.sub(" ", body).strip()


def _image(match: re.Match[str], urls: list[str]) -> str:
    alt = match.group(1).strip()
    if alt:
        return f"[image: {alt}]"
    # No alt text: the file's name is what tells one image from another (its host, size
    # folders and query are a CDN's business).
    target = match.group(2) or match.group(3) or ""
    name = urllib.parse.urlsplit(target).path.rsplit("/", 1)[-1]
    return f"[image: {name}]" if name else "[image]"


def _link(match: re.Match[str], urls: list[str]) -> str:
    target = match.group(2) or match.group(3) or ""
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
    kept = []
    for pair in parts.query.split("&") if parts.query else ():
        name, _, value = pair.partition("=")
        if not _noise_param(urllib.parse.unquote_plus(name), urllib.parse.unquote_plus(value)):
            kept.append(pair)
    query = "&".join(kept)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, query, ""))


def _noise_param(name: str, value: str) -> bool:
    lowered = name.lower()
    if lowered.startswith(("utm_", "mc_", "pk_", "mtm_", "itm_", "hsa_")) or lowered in _TRACKING:
        return True
    if "sessid" in lowered or lowered.endswith("sessionid"):
        return True
    return lowered in _BUSTERS and bool(_NUMERIC.match(value) or _HEX_TOKEN.match(value))
