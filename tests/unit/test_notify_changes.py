"""The `data-change` parts a scheduled turn emits: what notifications and flap suppression read."""

from __future__ import annotations

from typing import Any

from lookout.agent import planner_rules


def snap(*lines: str, at: str = "2025-01-01 09:00 UTC") -> dict[str, Any]:
    return {"at": at, "title": "Menu", "lines": list(lines)}


def test_a_first_sight_or_an_untouched_page_emits_nothing() -> None:
    kept = snap("Soup of the day", "Fresh bread")

    assert planner_rules.change_parts({}, {"https://a.example/": kept}) == []
    assert planner_rules.change_parts({"u": kept}, {"u": kept}) == []


def test_a_clock_or_a_reordering_is_no_change() -> None:
    before = {"u": snap("Soup of the day", "Updated 09:00", "Fresh bread")}
    after = {"u": snap("Fresh bread", "Soup of the day", "Updated 10:42", at="later")}

    assert planner_rules.change_parts(before, after) == []


def test_a_change_says_what_was_added_and_removed_and_digests_both_versions() -> None:
    a, b = snap("Soup of the day", "Fresh bread"), snap("Soup of the day", "Apple tart", at="b")

    [part] = planner_rules.change_parts({"u": a}, {"u": b})
    [back] = planner_rules.change_parts({"u": b}, {"u": snap("Fresh bread", "Soup of the day")})

    assert part["type"] == "data-change"
    data = part["data"]
    assert (data["added"], data["removed"]) == (["Apple tart"], ["Fresh bread"])
    assert (data["added_count"], data["removed_count"], data["since"]) == (1, 1, a["at"])
    assert data["before"] != data["after"]
    assert back["data"]["after"] == data["before"]  # back to version A, whatever the order


def test_a_big_change_carries_a_bounded_excerpt_and_exact_counts() -> None:
    many = [f"Item number {i}" for i in range(100)]

    [part] = planner_rules.change_parts({"u": snap("Nothing yet")}, {"u": snap(*many)})

    assert len(part["data"]["added"]) == planner_rules.CHANGE_LINES
    assert part["data"]["added_count"] == 100
