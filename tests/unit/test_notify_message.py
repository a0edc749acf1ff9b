"""What a notification says, and the webhook signature a receiver checks."""

from __future__ import annotations

import hashlib
import hmac
import json
import pathlib
import re
import time
import uuid
from typing import Any

from lookout.notify import message, prefs, versions

CHANGE = {
    "url": "https://shop.example/menu", "title": "Menu", "since": "2025-01-01 09:00 UTC",
    "added": ["Apple tart"] + [f"new {i}" for i in range(30)],
    "removed": ["Fresh bread"], "added_count": 31, "removed_count": 1,
    "before": "a" * 32, "after": "b" * 32,
}  # fmt: skip


def test_changes_are_read_from_the_data_change_parts_only() -> None:
    emitted = [{"type": "text-delta", "delta": "x"}, {"type": "data-change", "data": CHANGE}]

    assert message.changes_of(emitted) == [CHANGE]


def test_the_text_says_what_was_added_and_removed_with_page_and_chat_links() -> None:
    chat_id = uuid.uuid4()
    link = message.chat_link("https://lookout.example.com/", chat_id)

    text = message.body([CHANGE], link, chat_id)

    assert message.title([CHANGE]) == "Lookout: Menu changed"
    assert "+ Apple tart" in text and "- Fresh bread" in text
    assert "https://shop.example/menu" in text
    assert f"https://lookout.example.com/#/chat/{chat_id}" in text
    assert "… and 26 more" in text


def test_the_webhook_payload_is_a_bounded_excerpt_and_its_signature_verifies() -> None:
    ids = {"watch_id": uuid.uuid4(), "chat_id": uuid.uuid4(), "run_id": uuid.uuid4()}
    data = message.payload(**ids, changes=[CHANGE], chat_url=None, occurred_at="now")
    raw = message.encode(data)

    signature = message.sign("whsec_test", raw)

    assert data["event"] == "watch.changed" and data["run_id"] == str(ids["run_id"])
    assert data["summary"] == "Menu: 31 added, 1 removed"
    assert len(data["changes"][0]["added"]) == message.EXCERPT_LINES
    assert "before" not in data["changes"][0]
    assert re.fullmatch(r"t=\d{10},v1=[0-9a-f]{64}", signature)
    assert message.verify("whsec_test", raw, signature)
    assert not message.verify("whsec_other", raw, signature)
    assert not message.verify("whsec_test", raw + b" ", signature)


def test_the_timestamp_is_signed_and_an_old_signature_is_refused() -> None:
    raw = b'{"event":"test"}'
    sent_at = 1_800_000_000
    signature = message.sign("whsec_test", raw, timestamp=sent_at)
    mac = signature.split(",v1=")[1]

    # the signed text is "<t>.<body>", as Stripe and Standard Webhooks sign it
    expected = hmac.new(b"whsec_test", b"1800000000." + raw, hashlib.sha256).hexdigest()
    assert signature == f"t={sent_at},v1={expected}"
    # within the tolerance, either side: taken
    assert message.verify("whsec_test", raw, signature, now=sent_at + 299)
    assert message.verify("whsec_test", raw, signature, now=sent_at - 299)
    # older than the tolerance (a replay): refused
    assert not message.verify("whsec_test", raw, signature, now=sent_at + 301)
    # a fresh timestamp pasted onto the old MAC: refused (the time is inside the signed text)
    assert not message.verify("whsec_test", raw, f"t={sent_at + 400},v1={mac}", now=sent_at + 400)
    # malformed headers: refused, never an exception
    for bad in ("", "v1=" + mac, f"t={sent_at}", f"t=9{'9' * 400},v1={mac}", "t=x,v1=y"):
        assert not message.verify("whsec_test", raw, bad, now=sent_at)


def test_a_version_is_new_only_when_it_differs_from_each_of_the_last_n() -> None:
    recent = ["B", "A", "C"]  # newest first

    assert versions.is_new("A", recent, 1) is True
    assert versions.is_new("A", recent, 2) is False
    assert versions.is_new("D", recent, 3) is True


def test_notify_me_turns_notifications_on_and_a_replaced_watch_keeps_its_settings() -> None:
    previous = prefs.WatchNotify(True, (uuid.uuid4(),), 2).to_json()

    asked = prefs.requested("notify me when https://shop.example/menu changes", None)
    plain = prefs.requested("watch https://shop.example/menu daily", None)
    kept = prefs.requested("watch https://shop.example/menu hourly", previous)

    assert asked == prefs.WatchNotify(enabled=True)
    assert plain == prefs.WatchNotify()
    assert kept.to_json() == previous
    assert "default notification target" in prefs.sentence(asked)
    assert prefs.sentence(plain) == ""


def test_a_patch_changes_only_the_keys_it_sends() -> None:
    current = prefs.WatchNotify(True, None, 1)

    changed = current.merged({"compared_versions": 2})

    assert changed == prefs.WatchNotify(True, None, 2)
    assert json.dumps(changed.to_json())


def test_the_readme_receiver_accepts_ours_and_refuses_an_old_one() -> None:
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    snippet = readme.split("### Receiving webhooks", 1)[1].split("```python\n", 1)[1]
    namespace: dict[str, Any] = {}
    exec(snippet.split("```", 1)[0], namespace)  # the receiver code the docs show, as is
    raw = b'{"event":"test"}'

    assert namespace["verify"]("whsec_test", raw, message.sign("whsec_test", raw))
    old = message.sign("whsec_test", raw, timestamp=int(time.time()) - 600)
    assert not namespace["verify"]("whsec_test", raw, old)
    assert not namespace["verify"]("whsec_other", raw, message.sign("whsec_test", raw))
