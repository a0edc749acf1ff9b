"""What a notification says: pure functions from a run's `data-change` parts to a title, a text
body (Apprise) and a JSON payload (webhooks), and the webhook signature."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import urllib.parse
import uuid
from typing import Any

EVENT = "watch.changed"
TEST_EVENT = "test"
CONDITION_EVENT = "watch.condition"
SHOWN_LINES = 5  # per side, in the text body
EXCERPT_LINES = 20  # per side, in a webhook payload
LINE_CHARS = 200
SIGNATURE_HEADER = "X-Lookout-Signature"
DELIVERY_HEADER = "X-Lookout-Delivery"
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


def summary(changes: list[dict[str, Any]]) -> str:
    """One line: which pages changed and by how much."""
    said = []
    for change in changes:
        added, removed = int(change.get("added_count", 0)), int(change.get("removed_count", 0))
        said.append(f"{_name(change)}: {added} added, {removed} removed")
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
        lines += _side("+", change.get("added") or [], int(change.get("added_count", 0)))
        lines += _side("-", change.get("removed") or [], int(change.get("removed_count", 0)))
        lines.append("")
    lines.append(f"Chat: {chat_url}" if chat_url else f"Open chat {chat_id} in Lookout.")
    return "\n".join(lines)


def _side(mark: str, shown: list[str], count: int) -> list[str]:
    out = [f"{mark} {clean(line)}" for line in shown[:SHOWN_LINES]]
    more = count - len(out)
    return out + ([f"  … and {more} more"] if more > 0 else [])


def payload(
    *,
    watch_id: uuid.UUID,
    chat_id: uuid.UUID,
    run_id: uuid.UUID,
    changes: list[dict[str, Any]],
    chat_url: str | None,
    occurred_at: str,
) -> dict[str, Any]:
    """The webhook body of a `watch.changed` event (the delivery id is added per target)."""
    return {
        "event": EVENT,
        "watch_id": str(watch_id),
        "chat_id": str(chat_id),
        "run_id": str(run_id),
        "occurred_at": occurred_at,
        "summary": summary(changes),
        "chat_url": chat_url,
        "changes": [_excerpt(change) for change in changes],
    }


def _excerpt(change: dict[str, Any]) -> dict[str, Any]:
    return {
        "url": change["url"],
        "title": change.get("title") or "",
        "since": change.get("since"),
        "added": [clean(line) for line in (change.get("added") or [])[:EXCERPT_LINES]],
        "removed": [clean(line) for line in (change.get("removed") or [])[:EXCERPT_LINES]],
        "added_count": int(change.get("added_count", 0)),
        "removed_count": int(change.get("removed_count", 0)),
    }


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


def sign(secret: str, raw: bytes) -> str:
    """The X-Lookout-Signature value: `sha256=` + hex HMAC-SHA256 of the body."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()


def verify(secret: str, raw: bytes, signature: str) -> bool:
    """What a receiver does (and tests use): constant-time comparison with our signature."""
    return hmac.compare_digest(sign(secret, raw), signature)


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
