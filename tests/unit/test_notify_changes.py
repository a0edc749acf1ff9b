"""The parts a scheduled turn emits from its looks: a `data-change` per changed source (what
notifications and flap suppression read) and one `data-diff`, the run's result."""

from __future__ import annotations

from typing import Any

from lookout.agent import changes, report


def looked(pages: dict[str, Any], markdown: str, at: str) -> list[dict[str, Any]]:
    entry = changes.page_entry(markdown, pages.get("u"))
    found = changes.track(pages, "u", entry, at=at, title="Menu", scheduled=True)
    return [changes.data(found)] if found else []


def test_a_first_sight_emits_nothing_and_an_untouched_page_only_the_run_result() -> None:
    pages: dict[str, Any] = {}

    first = report.parts_of(looked(pages, "Soup of the day\n\nFresh bread", "a"))
    again = report.parts_of(looked(pages, "Soup of the day\n\nFresh bread", "b"))

    assert first == []
    assert [part["type"] for part in again] == ["data-diff"]
    assert again[0]["data"]["changed"] is False and again[0]["data"]["sources"][0]["since"] == "a"
    assert report.run_data(again) == again[0]["data"]


def test_a_change_says_what_changed_and_digests_both_versions() -> None:
    pages: dict[str, Any] = {}
    looked(pages, "Soup of the day\n\nFresh bread", "a")

    change, diff = report.parts_of(looked(pages, "Soup of the day\n\nApple tart", "b"))
    [back, _] = report.parts_of(looked(pages, "Soup of the day\n\nFresh bread", "c"))

    assert change["type"] == "data-change" and diff["type"] == "data-diff"
    data = change["data"]
    assert (data["added"], data["removed"]) == (["Apple tart"], ["Fresh bread"])
    assert (data["added_count"], data["removed_count"], data["since"]) == (1, 1, "a")
    assert diff["data"]["changed"] is True and diff["data"]["added"] == ["Apple tart"]
    assert data["before"] != data["after"]
    assert back["data"]["after"] == data["before"]  # back to version A


def test_a_big_change_carries_a_bounded_excerpt_and_exact_counts() -> None:
    pages: dict[str, Any] = {}
    looked(pages, "Nothing yet", "a")

    [change, diff] = report.parts_of(
        looked(pages, "\n\n".join(f"Item {i}" for i in range(100)), "b")
    )

    assert len(change["data"]["added"]) == changes.DATA_ITEMS
    assert change["data"]["added_count"] == 100 and diff["data"]["counts"]["added"] == 100
