"""The shapes every maps provider returns: a place and a review, clipped to the schema's bounds."""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

from lookout.schema import maps as schema
from lookout.schema import verbs

_REF = re.compile(schema.REF_ID)


def is_ref(value: Any) -> bool:
    """Whether a provider's id can travel inside a place_ref (maps.reviews checks the form)."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None


def field(item: Any, key: str) -> dict[str, Any]:
    """`item[key]` if both are JSON objects, else an empty one: upstream JSON is untrusted."""
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, dict) else {}


def text(value: Any, limit: int) -> str | None:
    """`value` as one line of at most `limit` characters, or None if it is not text."""
    if not isinstance(value, str):
        return None
    return " ".join(value.split())[:limit] or None


def number(value: Any) -> float | None:
    """A finite number from a JSON number or numeric string (Nominatim sends coordinates as
    strings), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        parsed = float(value)
    except ValueError:
        return None
    return parsed if math.isfinite(parsed) else None


def place(
    *,
    provider: str,
    ref: str,
    lat: float,
    lon: float,
    name: Any = None,
    address: Any = None,
    category: Any = None,
    rating: Any = None,
    reviews_count: Any = None,
    url: Any = None,
    opening_hours: Any = None,
    price_level: Any = None,
) -> dict[str, Any]:
    count = reviews_count if isinstance(reviews_count, int) and reviews_count >= 0 else None
    extra = {  # only when the provider was asked for them and has them (maps_hours_and_prices)
        key: said
        for key, value, limit in (
            ("opening_hours", opening_hours, schema.MAX_HOURS),
            ("price_level", price_level, schema.MAX_PRICE_LEVEL),
        )
        if (said := text(value, limit)) is not None
    }
    return extra | {
        "place_ref": f"{provider}:{ref}",
        "name": text(name, schema.MAX_NAME),
        "address": text(address, schema.MAX_ADDRESS),
        "lat": lat,
        "lon": lon,
        "category": text(category, schema.MAX_CATEGORY),
        "rating": number(rating),
        "reviews_count": count,
        "url": url if isinstance(url, str) and 0 < len(url) <= verbs.MAX_URL else None,
        "provider": provider,
    }


def review(
    *, author: Any, rating: Any, text_: Any, published_at: Any, language: Any
) -> dict[str, Any]:
    return {
        "author": text(author, schema.MAX_AUTHOR),
        "rating": number(rating),
        # Line breaks carry meaning in a review; only its length is bounded.
        "text": text_[: schema.MAX_REVIEW_TEXT] if isinstance(text_, str) else None,
        "published_at": timestamp(published_at),
        "language": text(language, 20),
    }


def timestamp(value: Any) -> datetime.datetime | None:
    """An RFC 3339 time (Google sends nanoseconds; Python keeps microseconds), else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
