"""Reading a watch's subject off a scraped page: the value its condition is judged on (pure).

- a price: the page's structured data (web.scrape's `data`: schema.org Offer/Product in JSON-LD
  or microdata, og:price:amount / product:price), else the currency amount nearest to the words
  of the request;
- a named number ("the rating", "the temperature"): the number next to the named subject;
- availability: structured data, else "in stock" / "sold out" / "out of stock" phrases;
- a text (mentions / absent): whether the page says it;
- new items: the page's list (list items and headings of its markdown);
- any change: the page's digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Any

from price_parser import Price

from lookout.agent import wants

MAX_ITEMS = 200
_CURRENCY = r"(?:€|\$|£|¥|₹|EUR|USD|GBP|JPY|CHF|SEK|INR|CAD|AUD|kr)"
# An amount before its currency starts where its number run does: trying from each digit of the
# run was quadratic ("x 1111..."), and ",5 €" is not 5 €.
_AMOUNT = re.compile(
    rf"{_CURRENCY}\s?\d[\d.,\s]*\d|{_CURRENCY}\s?\d|(?<![\d.,])\d[\d.,]*(?:\s?(?:{_CURRENCY}|euros?"
    r"|dollars?|pounds?))(?![A-Za-z])",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?|(?<![\w.])\d+(?:[.,]\d+)?")
_OUT_OF_STOCK = re.compile(
    r"\b(?:out\s+of\s+stock|sold\s+out|currently\s+unavailable|not\s+available|unavailable"
    r"|no\s+longer\s+available|temporarily\s+out|back\s*order(?:ed)?|notify\s+me\s+when\s+available"
    r"|coming\s+soon)\b",
    re.IGNORECASE,
)
_IN_STOCK = re.compile(
    r"(?<!out of )\b(?:in\s+stock|add\s+to\s+(?:cart|basket|bag)|available\s+now|buy\s+now"
    r"|ships\s+(?:in|today|tomorrow)|only\s+\d+\s+left|order\s+now)\b",
    re.IGNORECASE,
)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#{1,6})\s+(?P<item>.+)$")
_STOP_TEXT = """
the a an of on at in to for and or me my us when if is are it its this that let know tell notify
ping alert email drops drop below above under over price cost euros euro dollars pounds watch track
monitor every day daily hourly check please once goes falls
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclasses.dataclass(frozen=True)
class Reading:
    """What a run read; `found` False: the subject is not on the page."""

    found: bool
    value: float | None = None
    unit: str | None = None
    present: bool | None = None
    items: tuple[str, ...] = ()
    digest: str | None = None
    source: str = ""
    name: str | None = None


def read(condition: wants.Condition, page: dict[str, Any], request: str) -> Reading:
    """The subject of `condition` on `page` (a web.scrape page), read for `request`."""
    if page.get("error"):
        return Reading(False, source="fetch failed")
    kind = condition["kind"]
    text = page.get("markdown") or page.get("text") or ""
    data = page.get("data") or {}
    if kind in ("below", "above", "changes_by"):
        return _number(condition, text, data, request)
    if kind == "in_stock":
        return _stock(text, data)
    if kind in ("mentions", "absent"):
        return Reading(
            True, present=_says(text, str(condition.get("text") or "")), source="page text"
        )
    if kind == "new_items":
        items = _items(text)
        return Reading(bool(items), items=items, source="page list")
    digest = hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:32]
    return Reading(True, digest=digest, source="page text")


def _number(condition: wants.Condition, text: str, data: dict[str, Any], request: str) -> Reading:
    named, unit = condition.get("text"), condition.get("unit")
    if unit == "%" and condition["kind"] == "changes_by":
        unit = None  # the percentage is the change's, not the subject's
    if named:
        value = _named_number(text, str(named))
        return Reading(value is not None, value=value, unit=unit, source="page text")
    if data.get("price") is not None and unit in (None, data.get("currency")):
        return Reading(
            True,
            value=float(data["price"]),
            unit=data.get("currency") or unit,
            source="structured data",
            name=data.get("name"),
        )
    if unit == "%":
        value = _named_number(text, "%") if "%" in text else None
        return Reading(value is not None, value=value, unit=unit, source="page text")
    found = _nearest_amount(text, request, unit)
    if found is None:
        return Reading(False, unit=unit, source="page text")
    return Reading(True, value=found[0], unit=found[1] or unit, source="page text")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{3,}", text.lower()) if w not in _STOP_WORDS}


def _nearest_amount(text: str, request: str, unit: str | None) -> tuple[float, str | None] | None:
    """The currency amount whose line (twice) and the line above (a heading names what follows)
    share the most words with the request; the first such amount on a tie."""
    lines = [line for line in text.splitlines() if line.strip()][:2000]
    wanted = _words(re.sub(r"https?://\S+", lambda m: m.group().replace("/", " "), request))
    best: tuple[int, int, float, str | None] | None = None
    for index, line in enumerate(lines):
        score = None  # once a line: scored per amount, a line of many amounts was quadratic
        for match in _AMOUNT.finditer(line):
            parsed = Price.fromstring(match.group())
            if parsed.amount is None:
                continue
            currency = _code(parsed.currency)
            if unit and currency and currency != unit:
                continue
            if score is None:
                above = lines[index - 1] if index else ""
                score = 2 * len(wanted & _words(line)) + len(wanted & _words(above))
            if best is None or score > best[0]:
                best = (score, index, float(parsed.amount), currency)
    return (best[2], best[3]) if best else None


def _code(symbol: str | None) -> str | None:
    if not symbol:
        return None
    table = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY", "₹": "INR", "kr": "SEK"}
    lowered = symbol.strip().lower()
    if lowered.startswith("euro"):
        return "EUR"
    if lowered.startswith("dollar"):
        return "USD"
    if lowered.startswith("pound"):
        return "GBP"
    return table.get(symbol.strip(), symbol.strip().upper())


def _named_number(text: str, named: str) -> float | None:
    """The number closest after (else before) the named subject, on its line or the next."""
    lines = text.splitlines()
    words = [w for w in named.lower().split() if w not in ("of", "the")]
    for index, line in enumerate(lines):
        lowered = line.lower()
        at = lowered.find(words[-1]) if words else -1
        if at < 0 or not all(w in lowered for w in words):
            continue
        after = _NUMBER.search(line, at)
        if after is None and index + 1 < len(lines):
            after = _NUMBER.search(lines[index + 1])
        before = list(_NUMBER.finditer(line[:at]))
        hit = after or (before[-1] if before else None)
        if hit is not None:
            return wants.number(hit.group())
    return None


def _stock(text: str, data: dict[str, Any]) -> Reading:
    if data.get("availability"):
        return Reading(True, present=data["availability"] == "in_stock", source="structured data")
    if _OUT_OF_STOCK.search(text):
        return Reading(True, present=False, source="page text")
    if _IN_STOCK.search(text):
        return Reading(True, present=True, source="page text")
    return Reading(False, source="page text")


def _says(text: str, wanted: str) -> bool:
    return " ".join(wanted.lower().split()) in " ".join(text.lower().split()) if wanted else False


def _items(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for line in text.splitlines():
        match = _ITEM.match(line)
        if match is not None:
            item = " ".join(match.group("item").split())[:200]
            if len(item) >= 3 and item not in found:
                found.append(item)
        if len(found) >= MAX_ITEMS:
            break
    return tuple(found)
