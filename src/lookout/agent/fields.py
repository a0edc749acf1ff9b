"""The field a question names (price, date, opening hours, address, phone, availability, author)
and its value on a page: from the page's structured data when the scrape carries it, else from
the passage that best matches the question and states a value of that kind."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from lookout.agent import passages

_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("opening hours", re.compile(
        # "when ... open": the scan from a "when" stops at the next "when", which is tried
        # on its own; `when .*\bopen` rescanned the rest of the line from every "when"
        r"\b(opening hours|open(ing)? times?|hours|when (?:(?!\bwhen )[^\n])*?\bopen|is it open|"
        r"open (on|at|until|till)|clos(e|es|ing) (on|at|time))\b"
    )),
    ("price", re.compile(
        r"\b(price[sd]?|pricing|cost[s]?|how much|fee[s]?|rate[s]?|cheap|expensive)\b"
    )),
    ("availability", re.compile(
        r"\b(in stock|availab(le|ility)|sold out|stock|can i (buy|order))\b"
    )),
    ("phone", re.compile(r"\b(phone|telephone|call (them|it)|phone number|contact number)\b")),
    ("address", re.compile(r"\b(address|where is|where are|located|location|directions)\b")),
    ("author", re.compile(r"\b(author|who wrote|written by|by whom|who is the writer)\b")),
    ("date", re.compile(r"\b(when|what date|which date|date|deadline|what day|published)\b")),
)  # fmt: skip

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"
_TIME = r"\d{1,2}(?:[:.]\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.|h)?"
_VALUES: dict[str, re.Pattern[str]] = {
    "price": re.compile(
        r"(?:[$€£¥₹]|\b(?:usd|eur|gbp|chf|us\$)\s?)\s?\d[\d,.' ]*\d|(?:[$€£¥₹])\s?\d"
        # A number run is taken whole (a currency can only follow its end) and, with no currency
        # after it, still matched as `bare` so the search moves past it: retrying from each digit
        # inside the run was quadratic ("1 1 1 ...").
        r"|\b\d[\d,.' ]*+(?:\s?(?:(?:million|billion|thousand|m|bn|k)\s)?"
        r"(?:€|\$|£|eur\b|usd\b|gbp\b|chf\b|euros?\b|dollars?\b|pounds?\b)|(?P<bare>))",
        re.I,
    ),
    "opening hours": re.compile(
        rf"\b{_DAY}(?:\s*(?:[-\u2013\u2014]|to)\s*{_DAY})?[\s:,]+{_TIME}\s*(?:[-\u2013\u2014]|to|until)\s*{_TIME}"
        rf"|\b(?:open|opens|opening)\b[^.\n]{{0,40}}?{_TIME}\s*(?:[-\u2013\u2014]|to|until)\s*{_TIME}"
        r"|\bclosed\b|\b24/7\b|\bopen 24 hours\b",
        re.I,
    ),
    "availability": re.compile(
        r"\b(?:in stock|out of stock|sold out|available now|currently unavailable|unavailable|"
        r"back in stock|pre-?order|\d+\s+(?:left|in stock|units?|available))\b",
        re.I,
    ),
    "phone": re.compile(r"(?:\+|\b)\d[\d ()./-]{6,}\d\b"),
    "address": re.compile(
        r"\b\d{1,5}\s+[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,4}\s+(?:street|st\.?|avenue|ave\.?|"
        r"road|rd\.?|boulevard|blvd\.?|lane|ln\.?|drive|dr\.?|way|place|pl\.?|square|sq\.?)\b"
        # A street name starts where its word run does (or after its leading "-"), not after each
        # inner "-": retrying from each was quadratic ("ab-ab-ab-...")
        r"|(?:(?<![\w-])|(?<=-)(?<![\w-]-))[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|platz|weg|allee|gasse)\s*\d{1,4}\w?"
        r"|\b\d{4,5}\s+[A-ZÄÖÜ][a-zäöüß]+",
        re.I,
    ),
    "author": re.compile(r"\b[Bb]y\s+([A-Z][\w.'-]+(?:\s+[A-Z][\w.'-]+){0,3})"),
    "date": re.compile(
        rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:\s+\d{{4}})?\b"
        rf"|\b{_MONTH}\s+\d{{4}}\b|\b(?:spring|summer|autumn|fall|winter)\s+\d{{4}}\b"
        r"|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b",
        re.I,
    ),
}
_PHONE_DIGITS = 7
_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹"}


@dataclasses.dataclass(frozen=True)
class Found:
    """A field's value, and where it was read."""

    field: str
    value: str
    passage: passages.Passage | None = None  # None: from the page's structured data
    source: str = ""


def asked(question: str) -> str | None:
    """The field `question` names, or None."""
    lowered = question.lower()
    for field, pattern in _ASKS:
        if pattern.search(lowered):
            return field
    return None


def wants_data(question: str) -> bool:
    """Whether `question` names a field the page's structured data states (price, stock)."""
    return asked(question) in ("price", "availability")


def structured(field: str, page: dict[str, Any]) -> str | None:
    """The field from what the scrape read of the page's own data: schema.org / meta product
    facts (the "data" format) and its metadata (published and modified times)."""
    data, about = page.get("data") or {}, page.get("metadata") or {}
    if field == "price" and data.get("price") is not None:
        amount, currency = f"{float(data['price']):,.2f}", str(data.get("currency") or "")
        if currency.upper() in _SYMBOLS:
            return _SYMBOLS[currency.upper()] + amount
        return f"{amount} {currency}".strip()
    if field == "availability" and data.get("availability"):
        return "In stock" if data["availability"] == "in_stock" else "Out of stock"
    if field == "date":
        stated = about.get("published_at") or about.get("modified_at")
        return str(stated)[:10] if stated else None
    if field == "author":
        return about.get("author")
    return None


def value_in(field: str, text: str) -> str | None:
    """The first value of kind `field` in `text`."""
    for match in _VALUES[field].finditer(text):
        if match.lastgroup == "bare":  # a number with no currency
            continue
        found = (match.group(1) if field == "author" else match.group()).strip(" .,;")
        if field == "phone" and sum(c.isdigit() for c in found) < _PHONE_DIGITS:
            continue
        return found
    return None


def find(
    question: str, page: dict[str, Any], ranked: Sequence[passages.Passage],
    every: Sequence[passages.Passage],
) -> Found | None:  # fmt: skip
    """The value of the field `question` names: structured data, then the best-ranked passage
    stating one, then the first passage of the page stating one."""
    field = asked(question)
    if field is None:
        return None
    if (value := structured(field, page)) is not None:
        return Found(field, str(value), None, "the page's own data")
    for passage in [*ranked, *every]:
        if (
            value := value_in(
                field,
                f"{passage.section}: {passage.text}" if field == "opening hours" else passage.text,
            )
        ) is not None:
            return Found(field, value, passage)
    return None
