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
        changes.remember(pages, f"https://a.example/{i}", "t", "title", ["x"], "d")  # type: ignore[arg-type]

    assert len(lines) == changes.MAX_LINES
    assert max(len(line) for line in lines) == changes.MAX_LINE_CHARS
    assert len(pages) == 20
    assert "https://a.example/29" in pages and "https://a.example/0" not in pages


def test_a_snapshot_digest_is_blind_to_what_diff_ignores_and_sees_what_it_sees() -> None:
    lines, version = changes.capture("# Prices\n* Apple 1.20\n* Pear 2.00\nUpdated 10:15")
    reordered, same = changes.capture("- Pear   2.00\n## Prices\n- Apple 1.20\nUpdated 11:47")
    _, changed = changes.capture("# Prices\n* Apple 1.25\n* Pear 2.00\nUpdated 10:15")

    assert lines == changes.snapshot("# Prices\n* Apple 1.20\n* Pear 2.00\nUpdated 10:15")
    assert version == same == changes.digest(lines) == changes.digest(reordered)
    assert not changes.diff(lines, reordered).changed
    assert changed != version


def test_a_long_line_digests_as_it_is_kept() -> None:
    lines, version = changes.capture("A " + "word " * 200 + "\nShort line here")

    assert len(lines[0]) == changes.MAX_LINE_CHARS
    assert version == changes.digest(lines)


def test_a_page_remembered_without_a_digest_gets_one_from_its_lines() -> None:
    lines, version = changes.capture("Soup of the day\nApple tart")
    pages: dict[str, object] = {}
    changes.remember(pages, "https://a.example/", "t", "Menu", lines, version)

    assert changes.page_digest(pages["https://a.example/"]) == version  # type: ignore[arg-type]
    assert changes.page_digest({"lines": lines}) == version


def test_unchanged_markdown_reuses_the_remembered_snapshot_and_changed_markdown_does_not() -> None:
    markdown = "# Menu\n- Soup of the day\n- Apple tart"
    lines, version, source = changes.observe(markdown, None)
    remembered = {"lines": ["kept as remembered"], "digest": "d" * 32, "source": source}

    same = changes.observe(markdown, remembered)
    edited = changes.observe(markdown + "\n- Pear crumble", remembered)

    assert (lines, version) == changes.capture(markdown)
    assert same == (["kept as remembered"], "d" * 32, source)
    assert edited[0] == changes.snapshot(markdown + "\n- Pear crumble") and edited[2] != source
    assert changes.observe(markdown, {"lines": ["old"], "digest": "x"})[0] == lines  # no hash
