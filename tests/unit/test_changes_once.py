"""Each line is normalized once: a snapshot remembers its verbatim lines' hashes, so the next
look parses only what it reads now plus the prior lines its changes show."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lookout.agent import changes, lines

PAGE = "\n\n".join(
    f"Paragraph {n}: the [menu](https://x.example/{n}) of **day {n}**." for n in range(200)
)


def looked_at(pages: dict[str, Any], markdown: str) -> changes.Looked | None:
    entry = changes.page_entry(markdown, pages.get("u"))
    return changes.track(pages, "u", entry, at="then", title="t", scheduled=True)


def stored(pages: dict[str, Any]) -> dict[str, Any]:
    """The pages as the next turn reads them back from the checkpoint."""
    return dict(json.loads(json.dumps(pages)))


def test_a_changed_look_parses_its_page_once_and_of_the_prior_only_the_changed_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a page seen once, its snapshot read back as the checkpoint holds it
    pages: dict[str, Any] = {}
    assert looked_at(pages, PAGE) is None
    pages = stored(pages)
    parsed: list[str] = []
    parse = lines.parse

    def counted(raw: str) -> lines.Line | None:
        parsed.append(raw)
        return parse(raw)

    monkeypatch.setattr(lines, "parse", counted)

    # When one line of it changes
    looked = looked_at(pages, PAGE.replace("**day 17**", "**day 71**"))

    # Then the change is reported with its words, and each line of the new page was parsed
    # once, and of the prior only the changed line
    assert looked is not None and [c.kind for c in looked.changes] == ["modified"]
    assert looked.changes[0].before == "Paragraph 17: the menu of day 17."
    assert looked.changes[0].after == "Paragraph 17: the menu of day 71."
    assert len(parsed) == 200 + 1


def test_a_snapshot_from_before_the_remembered_hashes_is_still_compared() -> None:
    # Given a snapshot as the previous version stored it (no "kept" hashes)
    pages: dict[str, Any] = {}
    looked_at(pages, PAGE)
    pages = stored(pages)
    del pages["u"]["kept"]

    # When the page is read again, unchanged and then changed
    unchanged = looked_at(pages, PAGE + "\n")
    changed = looked_at(pages, PAGE.replace("**day 17**", "**day 71**"))

    # Then the first look is no change, the second reports the edited line
    assert unchanged is not None and not unchanged.changed
    assert changed is not None and [c.after for c in changed.changes] == [
        "Paragraph 17: the menu of day 71."
    ]
