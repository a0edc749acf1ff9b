"""What a notification says: pure functions from a run's `data-change` parts to a title, a text
body (Apprise) and a JSON payload (webhooks), and the webhook signature."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
import urllib.parse
import uuid
from typing import Any

from lookout.agent import changes as diff_text

EVENT = "watch.changed"
TEST_EVENT = "test"
CONDITION_EVENT = "watch.condition"
SHOWN_LINES = 5  # per side, in the text body
EXCERPT_LINES = 20  # per side, in a webhook payload
LINE_CHARS = 300
SIGNATURE_HEADER = "X-Lookout-Signature"
DELIVERY_HEADER = "X-Lookout-Delivery"
# How old a signature a receiver should still take (Stripe's default tolerance too).
SIGNATURE_TOLERANCE_S = 300
EVENT_HEADER = "X-Lookout-Event"
# A snapshot keeps the page's markdown lines; a notification shows their text.
_MARKER = re.compile(r"^(?:[-*+>]|\d+[.)]|#{1,6})\s+")


def changes_of(emitted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `data-change` parts' data of a turn, one per changed page."""
    return [dict(part["data"]) for part in emitted if part.get("type") == "data-change"]


def chat_link(public_url: str, chat_id: uuid.UUID) -> str | None:
    """The web page's address of the chat (None when LOOKOUT_PUBLIC_URL is not set)."""
    return f"{public_url.rstrip('/')}/#/chat/{chat_id}" if public_url else None


def _name(change: dict[str, Any]) -> str:
    return str(change.get("title") or urllib.parse.urlsplit(str(change["url"])).hostname or "")


def _counts(change: dict[str, Any]) -> dict[str, int]:
    counts = dict(change.get("counts") or {})
    counts.setdefault("added", int(change.get("added_count", 0)))
    counts.setdefault("removed", int(change.get("removed_count", 0)))
    return {kind: int(counts.get(kind, 0)) for kind in diff_text.KINDS}


def summary(changes: list[dict[str, Any]]) -> str:
    """One line: which pages changed and by how much."""
    said = []
    for change in changes:
        counts = _counts(change)
        told = [f"{counts[kind]} {kind}" for kind in diff_text.KINDS if counts[kind]]
        if not told:  # as "2 added, 0 removed" always said, for a change with neither
            told = [f"{counts['added']} added", f"{counts['removed']} removed"]
        said.append(f"{_name(change)}: {', '.join(told)}")
    return "; ".join(said)


def title(changes: list[dict[str, Any]]) -> str:
    if len(changes) == 1:
        return f"Lookout: {_name(changes[0])} changed"[:250]
    return f"Lookout: {len(changes)} pages changed"


def body(changes: list[dict[str, Any]], chat_url: str | None, chat_id: uuid.UUID) -> str:
    """The text of an Apprise notification: what was added and removed, the page, the chat."""
    lines: list[str] = []
    for change in changes:
        lines += [f"{_name(change)} — {change['url']}"]
        counts = _counts(change)
        for kind in diff_text.KINDS:
            lines += _side(kind, list(change.get(kind) or []), counts[kind])
        lines.append("")
    lines.append(f"Chat: {chat_url}" if chat_url else f"Open chat {chat_id} in Lookout.")
    return "\n".join(lines)


def _side(kind: str, shown: list[Any], count: int) -> list[str]:
    """Modified lines as before → after with the changed words marked, then added, removed and
    moved ones; SHOWN_LINES of each, "… and N more"."""
    out = [diff_text.said(kind, *_ends(kind, item)) for item in shown[:SHOWN_LINES]]
    more = count - len(out)
    return out + ([f"  … and {more} more"] if more > 0 else [])


def _ends(kind: str, item: Any) -> tuple[str | None, str | None]:
    if isinstance(item, dict):
        before, after = item.get("before"), item.get("after")
        return (None if before is None else clean(before)), clean(after or "")
    text = clean(item)
    return (None, text) if kind == "added" else (text, None)


def payload(
    *,
    watch_id: uuid.UUID,
    chat_id: uuid.UUID,
    run_id: uuid.UUID,
    changes: list[dict[str, Any]],
    chat_url: str | None,
    occurred_at: str,
    diff: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The webhook body of a `watch.changed` event (the delivery id is added per target):
    `diff` is the run's result as kept on the run, `changes` each changed page's."""
    return {
        "event": EVENT,
        "watch_id": str(watch_id),
        "chat_id": str(chat_id),
        "run_id": str(run_id),
        "occurred_at": occurred_at,
        "summary": summary(changes),
        "chat_url": chat_url,
        "changes": [_excerpt(change) for change in changes],
        "diff": diff,
    }


def _excerpt(change: dict[str, Any]) -> dict[str, Any]:
    return {
        "url": change["url"],
        "title": change.get("title") or "",
        "since": change.get("since"),
        "changed": True,
        "modified": _pairs(change.get("modified")),
        "added": [clean(line) for line in (change.get("added") or [])[:EXCERPT_LINES]],
        "removed": [clean(line) for line in (change.get("removed") or [])[:EXCERPT_LINES]],
        "moved": _pairs(change.get("moved")),
        "counts": _counts(change),
        "added_count": int(change.get("added_count", 0)),
        "removed_count": int(change.get("removed_count", 0)),
    }


def _pairs(found: object) -> list[dict[str, str | None]]:
    items = found if isinstance(found, list) else []
    return [
        {"before": None if item.get("before") is None else clean(item["before"]),
         "after": clean(item.get("after") or "")}
        for item in items[:EXCERPT_LINES] if isinstance(item, dict)
    ]  # fmt: skip


def clean(line: object) -> str:
    """A snapshot line as text: no list or heading marker, bounded."""
    return _MARKER.sub("", str(line), count=1)[:LINE_CHARS]


def ping_payload(target_name: str, occurred_at: str) -> dict[str, Any]:
    return {
        "event": TEST_EVENT,
        "summary": f"A test notification from Lookout to {target_name}.",
        "occurred_at": occurred_at,
    }


def encode(data: dict[str, Any]) -> bytes:
    """The exact bytes sent (and signed): compact, key order kept."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign(secret: str, raw: bytes, *, timestamp: int | None = None) -> str:
    """The X-Lookout-Signature value, `t=<unix seconds>,v1=<hex>`: the HMAC-SHA256 of
    `"<t>." + body`, so the time is signed too and a receiver can refuse a replayed old
    delivery (the scheme of Stripe and Standard Webhooks)."""
    stamp = int(time.time()) if timestamp is None else timestamp
    return f"t={stamp},v1={_mac(secret, stamp, raw)}"


def _mac(secret: str, stamp: int, raw: bytes) -> str:
    signed = str(stamp).encode("ascii") + b"." + raw
    return hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def verify(
    secret: str,
    raw: bytes,
    signature: str,
    *,
    tolerance_s: int = SIGNATURE_TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """What a receiver does (and tests use): the signature is ours, over this body and its
    timestamp, and the timestamp is within `tolerance_s` of `now` (constant-time comparison)."""
    fields: dict[str, list[str]] = {}
    for item in signature.split(","):
        name, _, value = item.strip().partition("=")
        fields.setdefault(name, []).append(value)
    stamps = fields.get("t", [])
    # Bounded before int(): a 12-digit time is past the year 30,000.
    if len(stamps) != 1 or not (stamps[0].isascii() and stamps[0].isdigit()) or len(stamps[0]) > 12:
        return False
    stamp = int(stamps[0])
    clock = time.time() if now is None else now
    if abs(clock - stamp) > tolerance_s:
        return False
    expected = _mac(secret, stamp, raw)
    return any(hmac.compare_digest(expected, given) for given in fields.get("v1", []))


def as_text(data: dict[str, Any]) -> tuple[str, str]:
    """(title, body) of a stored payload, for Apprise services."""
    if data.get("event") == TEST_EVENT:
        return "Lookout: test notification", str(data["summary"])
    if data.get("event") == CONDITION_EVENT:  # notify.alerts: a watch's condition came true
        link = data.get("chat_url") or f"Open chat {data.get('chat_id')} in Lookout."
        name = str(data.get("title") or data.get("url") or "your watch")
        return f"Lookout: {name}"[:250], f"{data.get('summary')}\n{data.get('url') or ''}\n{link}"
    changes = list(data.get("changes") or [])
    chat_id = uuid.UUID(str(data["chat_id"]))
    return title(changes), body(changes, data.get("chat_url"), chat_id)
