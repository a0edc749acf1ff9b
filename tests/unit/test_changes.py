from __future__ import annotations

from lookout.agent import changes


def test_whitespace_markup_order_and_timestamps_are_not_changes() -> None:
    before = changes.snapshot(
        "# Prices\n\n* Apple **1.20**\n* Pear 2.00\n\nUpdated 10:15 on 2026-11-29\n3 minutes ago"
    )
    after = changes.snapshot(
        "## Prices\n- Pear   2.00\n- Apple 1.20\nUpdated 11:47 on 2026-11-30\n12 minutes ago\n"
    )

    result = changes.diff(before, after)

    assert not result.changed
    assert changes.describe(result, "yesterday") == "No change since yesterday."


def test_added_and_removed_lines_are_reported_verbatim() -> None:
    before = changes.snapshot("# Menu\n- Soup of the day\n- Bread\n- Old cake")
    after = changes.snapshot("# Menu\n- Soup of the day\n- Bread\n- Fresh tart\n- Coffee")

    result = changes.diff(before, after)
    text = changes.describe(result, "Monday")

    assert result.added == ["- Fresh tart", "- Coffee"]
    assert result.removed == ["- Old cake"]
    assert "Added (2):" in text and "+ - Fresh tart" in text and "- - Old cake" in text


def test_a_changed_number_is_a_change() -> None:
    result = changes.diff(changes.snapshot("Price: 10 EUR"), changes.snapshot("Price: 12 EUR"))

    assert result.added == ["Price: 12 EUR"] and result.removed == ["Price: 10 EUR"]


def test_snapshots_and_memory_are_bounded() -> None:
    lines = changes.snapshot("\n".join(f"line number {i} " + "x" * 500 for i in range(1000)))
    pages: dict[str, object] = {}
    for i in range(30):
        changes.remember(pages, f"https://a.example/{i}", "t", "title", ["x"])  # type: ignore[arg-type]

    assert len(lines) == changes.MAX_LINES
    assert max(len(line) for line in lines) == changes.MAX_LINE_CHARS
    assert len(pages) == 20
    assert "https://a.example/29" in pages and "https://a.example/0" not in pages
