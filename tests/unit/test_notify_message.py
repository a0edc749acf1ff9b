"""What a notification says, and the webhook signature a receiver checks."""

from __future__ import annotations

import json
import uuid

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
    assert signature.startswith("sha256=") and message.verify("whsec_test", raw, signature)
    assert not message.verify("whsec_other", raw, signature)
    assert not message.verify("whsec_test", raw + b" ", signature)


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
