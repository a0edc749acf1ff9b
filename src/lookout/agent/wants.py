"""What a standing request wants to hear about: a condition read from plain words (pure).

A condition is `{kind, value, text, unit}`: `below` / `above` a number (`unit` a currency code
or "%", `text` the named subject when it is not a price), `mentions` / `absent` a text,
`new_items` (`text` what kind of item), `in_stock`, `changes_by` a percentage, `any`. The input
is the router's normalized text (lower case, URLs masked as `_url_`).
"""

from __future__ import annotations

import re
from typing import Any

from lookout.schema import watches as watch_schema

Condition = dict[str, Any]
KINDS = watch_schema.CONDITION_KINDS
MAX_TEXT = 200

_CURRENCY_WORDS = {
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "usd": "USD",
    "dollar": "USD", "dollars": "USD", "bucks": "USD", "£": "GBP", "gbp": "GBP", "pound": "GBP",
    "pounds": "GBP", "quid": "GBP", "¥": "JPY", "yen": "JPY", "jpy": "JPY", "chf": "CHF",
    "francs": "CHF", "sek": "SEK", "kr": "SEK", "krona": "SEK", "kronor": "SEK", "₹": "INR",
    "inr": "INR", "rupees": "INR", "cad": "CAD", "aud": "AUD", "%": "%", "percent": "%",
    "per cent": "%", "pct": "%",
}  # fmt: skip
_CUR = r"(?:€|\$|£|¥|₹|eur|usd|gbp|jpy|chf|sek|inr|cad|aud)"
_CUR_AFTER = (
    r"(?:€|\$|£|¥|₹|%|eur|euros?|usd|dollars?|bucks|gbp|pounds?|quid|jpy|yen|chf|francs|sek|kr"
    r"|krona|kronor|inr|rupees|cad|aud|percent|per\s+cent|pct)"
)
_NUM = r"(?:\d{1,3}(?:[,.]\d{3})+|\d+)(?:[.,]\d{1,2})?(?!\d)k?"
# A number starts at its first digit, not inside "1,234" or "1111": "<num> or less" tried from
# each digit of a long run was quadratic.
_AMOUNT = (
    rf"(?:(?P<pre>{_CUR})\s?)?(?<!\d)(?<!\d[,.])(?P<num>{_NUM})"
    rf"(?:\s?(?P<post>{_CUR_AFTER})\b|\s?(?P<sym>€|%))?"
)

_BELOW = (
    r"(?:(?:drops?|falls?|fell|dips?|goes|go|gets?|sinks?|comes?\s+down|is|are|hits?|reach(?:es)?"
    r"|costs?|sells?\s+for|priced)\s+)?(?:(?:to\s+)?(?:below|under(?:neath)?|beneath|less\s+than"
    r"|lower\s+than|cheaper\s+than|no\s+more\s+than|at\s+most|<=?)|(?:drops?|falls?|dips?|comes?"
    r"\s+down|goes\s+down|gets?\s+down|is\s+cut)\s+to(?:\s+or\s+below)?)"
)
_ABOVE = (
    r"(?:(?:rises?|rose|goes|go|gets?|climbs?|jumps?|is|are|moves?)\s+)?(?:(?:to\s+)?(?:above"
    r"|over|more\s+than|higher\s+than|greater\s+than|at\s+least|beyond|>=?)|(?:exceeds?|tops"
    r"|passes|surpass(?:es)?|crosses|hits|reaches|breaks|goes\s+past|gets\s+to|climbs\s+to"
    r"|rises\s+to|goes\s+up\s+to|jumps\s+to|reach|hit|cross|exceed|pass))"
)
_COMPARES = (
    ("below", re.compile(rf"\b(?:{_BELOW})\s*{_AMOUNT}")),
    ("above", re.compile(rf"\b(?:{_ABOVE})\s*{_AMOUNT}")),
    ("below", re.compile(rf"{_AMOUNT}\s+or\s+(?:less|lower|cheaper|under|below)\b")),
    ("above", re.compile(rf"{_AMOUNT}\s+or\s+(?:more|higher|above|over)\b")),
)
_CHANGES_BY = re.compile(
    r"\b(?:chang(?:es|e|ed)|moves?|swings?|jumps?|shifts?|drops?|falls?|rises?|increases?"
    r"|decreases?|goes\s+(?:up|down)|varies)\s+(?:by\s+)?(?:more\s+than\s+|over\s+|at\s+least\s+"
    r"|over\s+|upwards\s+of\s+)?(?P<num>\d+(?:[.,]\d+)?)\s*(?:%|percent|per\s+cent|pct)"
    r"|\b(?P<num2>\d+(?:[.,]\d+)?)\s*(?:%|percent|per\s+cent)\s+(?:change|move|swing|jump|drop"
    r"|rise|increase|decrease)"
)
_IN_STOCK = re.compile(
    r"\b(?:back\s+in\s+stock|in\s+stock|restock(?:ed|s)?|re-stock(?:ed)?|available\s+(?:again"
    r"|to\s+(?:buy|order|purchase)|for\s+(?:pre-?)?(?:order|purchase|sale))|(?:is|are|becomes?"
    r"|gets?|comes?)\s+(?:back\s+)?available|can\s+(?:be\s+)?(?:ordered|bought|purchased)"
    r"|no\s+longer\s+(?:sold\s+out|out\s+of\s+stock|unavailable)|(?:go|goes|are|is)\s+on\s+sale"
    r"|comes?\s+back\s+in|back\s+on\s+(?:sale|the\s+shelves)|(?:can|could)\s+(?:i\s+)?(?:buy|order)"
    r"\s+it)\b"
)
_SOLD_OUT = re.compile(r"\b(?:sells?\s+out|sold\s+out|out\s+of\s+stock|runs?\s+out)\b")
_ITEMS = (
    r"(?:posts?|articles?|listings?|jobs?|job\s+(?:ads|postings|openings)|openings?|positions?"
    r"|vacanc(?:y|ies)|roles?|items?|products?|episodes?|releases?|versions?|entries|results|comments"
    r"|reviews|stories|headlines|papers|apartments|flats|houses|homes|cars|events|issues|videos"
    r"|podcasts|chapters|updates|announcements|offers|deals|tickets|listings|filings|press"
    r"\s+releases|blog\s+posts|news\s+(?:items|stories))"
)
_NEW_ITEMS = re.compile(
    rf"\bnew\s+(?:\w+\s+){{0,2}}?(?P<items>{_ITEMS})\b"
    r"|\b(?P<what>anything|something)\s+new\s+(?:is\s+|gets\s+)?(?:posted|listed|published|added"
    r"|appears|shows\s+up|comes\s+out|goes\s+up)"
    r"|\b(?:they|it|someone)\s+(?:posts?|publish(?:es)?|lists?|adds?|releases?)\s+(?:a\s+|an\s+"
    rf"|any\s+|something\s+)?(?:new|another)\b(?:\s+(?P<items2>{_ITEMS}))?"
)
_ABSENT = re.compile(
    r"\b(?:no\s+longer\s+(?:mentions?|says|lists|shows|contains|includes|has)|stops?\s+(?:mentioning"
    r"|saying|listing|showing)|(?:does\s*n[o']?t|doesnt)\s+(?:mention|say|list|show|contain"
    r"|include)|removes?|drops|takes?\s+(?:down|off))\s+(?P<text>(?:[^,.;!?]|(?<=\d)\.(?=\d))+)"
    r"|\b(?P<text2>[^,.;!?]{2,80}?)\s+(?:disappears?|vanish(?:es)?|(?:is|are|gets?|has\s+been)"
    r"\s+(?:gone|removed|taken\s+(?:down|off)|deleted|no\s+longer\s+(?:there|listed|shown"
    r"|mentioned|on\s+(?:the|that|this)\s+page))|goes\s+away)\b"
)
_MENTIONS = re.compile(
    r"\b(?:mentions?|mentioning|says?|saying|contains?|containing|includes?|including|lists?"
    r"|listing|shows?|features?|has(?:\s+the\s+(?:word|phrase))?|talks?\s+about|writes?\s+about"
    r"|posts?\s+(?:about|on)|anything\s+(?:about|on|regarding)|something\s+(?:about|on)"
    r"|(?:the\s+)?(?:word|phrase|text|term|keyword))\s+(?P<text>(?:[^,.;!?]|(?<=\d)\.(?=\d))+)"
    r"|\b(?P<text2>[\"'][^\"']{1,80}[\"']|[^,.;!?]{2,60}?)\s+(?:is|are|gets?|gets\s+being)?\s*"
    r"(?:mentioned|announced|appears|shows\s+up|is\s+listed|gets\s+listed|pops\s+up|comes\s+up)\b"
)
_ANY = re.compile(
    r"\b(?:any(?:thing|\s+change|\s+changes|\s+update|\s+updates|\s+difference)?|something)\s+"
    r"(?:at\s+all\s+)?(?:chang|is\s+(?:updated|different)|updat|happen|differ|new\b)"
    r"|\b(?:any|every)\s+(?:single\s+)?(?:change|update|edit|difference)s?\b"
    r"|\bwhenever\s+(?:it|the\s+page|they|that|this|_url_)\s+(?:changes|is\s+updated|updates)\b"
    r"|\b(?:if|when|once)\s+(?:it|the\s+page|that|this|_url_|the\s+\w+)\s+(?:changes|is\s+updated"
    r"|gets\s+updated|updates)\b"
)
_SUBJECT = re.compile(
    r"\b(?:the|its|their|my|our)\s+(?P<subject>(?:[a-z][a-z-]*\s+){0,2}?(?:price|cost|fee|rate"
    r"|score|rating|count|number|temperature|level|index|value|balance|total|stars?|reviews?"
    r"|votes?|followers|subscribers|downloads|points|odds|yield|inflation|wait\s+time|queue"
    r"|stock|viewers|signups|members|attendees|seats|spots|bid)(?:\s+(?:count|number|rate|level"
    r"|total|score|price)|\s+of\s+[a-z]+)?)\b"
)
_PRICE_WORDS = frozenset({"price", "cost", "fee", "prices", "costs", "fees", "bid"})
_TRIM = re.compile(
    r"^(?:(?:the\s+)?(?:word|phrase|text|keyword|term)\s+|that\s+|about\s+|an?\s+|any\s+|the\s+)|\s+(?:on|at|in|from)\s+"
    r"(?:_url_|the\s+page|the\s+site|(?:that|this|the|their|my)\s+\w+)\b.*$|\s+(?:every|each|daily"
    r"|hourly|weekly|please|pls|anymore|any\s+more|again|at\s+all|ever|and\s+(?:let|tell|notify"
    r"|ping|email)|then)\b.*$|\s+_url_.*$|^_url_\s+"
)


def read(plain: str) -> Condition | None:
    """The condition `plain` states, or None (plain change watching)."""
    for reader in (_changes_by, _compare, _stock, _new_items, _absent, _mentions, _any):
        found = reader(plain)
        if found is not None:
            return found
    return None


def _make(
    kind: str, value: float | None = None, text: str | None = None, unit: str | None = None
) -> Condition:
    return {"kind": kind, "value": value, "text": text, "unit": unit}


def _compare(plain: str) -> Condition | None:
    found = [(m.start(), kind, m) for kind, rx in _COMPARES for m in rx.finditer(plain)]
    for _, kind, match in sorted(found, key=lambda f: f[0]):
        value = number(match["num"])
        if value is None or _clock_like(plain, match.end()):
            continue
        unit = _unit(match["pre"] or match["post"] or match["sym"])
        return _make(kind, value, _subject(plain[: match.start()], unit), unit)
    return None


def _clock_like(plain: str, end: int) -> bool:
    """ "over 3 hours", "under 5 minutes": a duration, not a threshold."""
    after = plain[end : end + 12]
    return (
        re.match(r"\s*(?:min|hour|hr|day|week|month|year|am\b|pm\b|o'clock|:)", after) is not None
    )


def _unit(raw: str | None) -> str | None:
    if raw is None:
        return None
    return _CURRENCY_WORDS.get(re.sub(r"\s+", " ", raw.strip()))


def _subject(before: str, unit: str | None) -> str | None:
    found = list(_SUBJECT.finditer(before[-120:]))
    if not found:
        return None
    subject = found[-1].group("subject").strip()
    if subject.split()[-1] in _PRICE_WORDS or (unit not in (None, "%") and "price" in subject):
        return None
    return subject[:MAX_TEXT]


def number(raw: str) -> float | None:
    """A number as people write it: 1,299.99 / 1.299,99 / 45,50 / 2.5k."""
    raw = raw.strip().replace(" ", "")
    scale = 1000.0 if raw.endswith("k") else 1.0
    raw = raw.removesuffix("k")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        raw = raw.replace(",", "")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?", raw):
        raw = raw.replace(".", "").replace(",", ".")
    else:
        raw = raw.replace(",", ".")
    try:
        return float(raw) * scale
    except ValueError:
        return None


def _changes_by(plain: str) -> Condition | None:
    match = _CHANGES_BY.search(plain)
    if match is None:
        return None
    value = number(match.group("num") or match.group("num2"))
    return _make("changes_by", value, _subject(plain[: match.start()], "%"), "%")


def _stock(plain: str) -> Condition | None:
    if _SOLD_OUT.search(plain) and not re.search(r"\bno\s+longer\s+(?:sold|out)", plain):
        return _make("absent", text="in stock")
    return _make("in_stock") if _IN_STOCK.search(plain) else None


def _new_items(plain: str) -> Condition | None:
    match = _NEW_ITEMS.search(plain)
    if match is None:
        return None
    items = match.group("items") or match.group("items2")
    return _make("new_items", text=items)


def _absent(plain: str) -> Condition | None:
    match = _ABSENT.search(plain)
    if match is None:
        return None
    text = _clean(match.group("text") or match.group("text2"))
    return _make("absent", text=text) if text else None


def _mentions(plain: str) -> Condition | None:
    for match in _MENTIONS.finditer(plain):
        text = _clean(match.group("text") or match.group("text2"))
        if text:
            return _make("mentions", text=text)
    return None


def _any(plain: str) -> Condition | None:
    return _make("any") if _ANY.search(plain) else None


_LEAD_IN = re.compile(
    r"^.*\b(?:when(?:ever)?|if|once|as\s+soon\s+as|the\s+moment|in\s+case)\s+(?:the\s+page\s+|it\s+"
    r"|_url_\s+|they\s+)?"
)


def _clean(text: str | None) -> str | None:
    if not text:
        return None
    text = _LEAD_IN.sub("", text.strip())
    for _ in range(3):
        text = _TRIM.sub("", text).strip()
    text = text.strip(" \"'\u201c\u201d\u2018\u2019")
    if not text or text in ("it", "this", "that", "them", "_url_", "anything", "something"):
        return None
    if re.fullmatch(r"(?:me|us|you)\b.*", text):
        return None
    return text[:MAX_TEXT]
