from __future__ import annotations

from lookout.mcp import bounds


def test_a_small_value_is_left_alone() -> None:
    value = {"pages": [{"title": "a", "markdown": "short"}]}
    assert bounds.bound(value, 1000, "hint") == (value, False)


def test_long_strings_are_cut_and_the_note_says_how_to_get_the_rest() -> None:
    value = {"pages": [{"title": "a", "markdown": "x" * 50_000}, {"title": "b", "markdown": "y"}]}

    cut, shortened = bounds.bound(value, 2_000, "Ask for less.")

    assert shortened is True
    assert bounds.size(cut) <= 2_000
    assert cut["truncated"] is True
    assert cut["truncation"]["how_to_get_the_rest"] == "Ask for less."
    assert cut["truncation"]["original_chars"] == bounds.size(value)
    assert [page["title"] for page in cut["pages"]] == ["a", "b"]  # the shape is kept
    assert cut["pages"][0]["markdown"].endswith(bounds.MARK)
    # as much as fits: one more character per string would not
    assert len(cut["pages"][0]["markdown"]) > 1_500


def test_long_lists_lose_their_last_items_when_cutting_strings_is_not_enough() -> None:
    value = {"links": [{"url": f"https://example.com/{n}"} for n in range(5_000)], "source": "s"}

    cut, shortened = bounds.bound(value, 3_000, "hint")

    assert shortened and bounds.size(cut) <= 3_000
    assert 0 < len(cut["links"]) < 5_000
    assert cut["links"][0] == {"url": "https://example.com/0"}  # the first items, whole
    assert cut["truncation"]["lists_cut_to"] == len(cut["links"])
    assert cut["source"] == "s"
