"""Page text that made the agent's markdown patterns backtrack for seconds, and what those
patterns still find on ordinary markdown."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from lookout.agent import latest, lines, passages

SIZE = 200_000  # characters: a text/plain page's body reaches these functions as is


def _repeat(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * ((SIZE - len(head) - len(tail)) // len(unit)) + tail


def _listed(markdown: str) -> list[str]:
    return latest.listed(
        {"markdown": markdown, "url": "https://example.com/"}, "https://example.com/"
    )


def _split(markdown: str) -> list[passages.Passage]:
    return passages.split(markdown, url="https://example.com/")


HOSTILE: list[tuple[str, Callable[[str], object], str]] = [
    ("link-pointy", lines.parse, _repeat("[](<")),
    ("image-pointy", lines.parse, _repeat("![](<")),
    # split collapses a line's spaces; parse alone must not depend on it.
    ("link-spaces", lines.parse, _repeat(" ", head="[](", tail="x")),
    ("latest-link", _listed, _repeat("](")),
    ("heading-hashes", _split, _repeat("#", head="# a", tail="b")),
    ("heading-spaces", _split, _repeat(" ", head="# a", tail="b")),
    ("rule-spaces", _split, _repeat(" ", head="|x|\n|--", tail="x|")),
    ("rule-indent", _split, _repeat(" ", head="|x|\n", tail="|x|")),
]


@pytest.mark.parametrize(
    ("call", "text"), [(c, t) for _, c, t in HOSTILE], ids=[i for i, *_ in HOSTILE]
)
def test_hostile_text_is_read_in_linear_time(call: Callable[[str], object], text: str) -> None:
    # A bound on a blow-up, not a speed figure: these take well under 0.1 s now, and took from
    # seconds to minutes when a pattern backtracked (quadratic or cubic in the text's length).
    assert len(text) >= SIZE - 5
    started = time.process_time()
    call(text)
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize(
    ("line", "text", "key"),
    [
        (
            '[our shop](https://ex.com/shop?utm_source=x "The shop") and '
            '![a cat](https://cdn.ex.com/cat.jpg "Cat")',
            "our shop and [image: a cat]",
            "our shop and [image: a cat] ⟨https://ex.com/shop⟩",
        ),
        (  # pointy and parenthesised targets are whole URLs
            '- [x](<https://ex.com/a b> "t") ![](https://cdn.ex.com/img/x.png?w=100) '
            "[the wiki](https://ex.com/wiki/A_(b)#top) [a [b] c]( <https://ex.com/c> )",
            "x [image: x.png] the wiki a [b] c",
            "x [image: x.png] the wiki a [b] c "
            "⟨https://ex.com/a b https://ex.com/wiki/A_(b) https://ex.com/c⟩",
        ),
    ],
    ids=["titles", "targets"],
)
def test_links_and_images_keep_their_text_and_urls(line: str, text: str, key: str) -> None:
    found = lines.parse(line)
    assert found is not None
    assert (found.text, found.key) == (text, key)


def test_latest_lists_same_site_links_in_page_order() -> None:
    markdown = (
        "- [Post one](/posts/one)\n"
        '- [Post two](https://www.example.com/posts/two "Two")\n'
        "[Pokédex](/wiki/List_(Pokedex)) [Home](https://example.com/) [off](https://other.com/x)\n"
        '![logo](/logo.png "Logo") [one again](/posts/one)'
    )
    # "List_(Pokedex)" is whole: the URL used to end at its first ")".
    assert latest.listed(
        {"markdown": markdown, "url": "https://example.com/blog/"}, "https://example.com/"
    ) == [
        "https://example.com/posts/one",
        "https://www.example.com/posts/two",
        "https://example.com/wiki/List_(Pokedex)",
        "https://example.com/logo.png",
    ]


@pytest.mark.parametrize(
    ("line", "section"),
    [
        ("## Title ##", "Title"),
        ("# C#", "C"),  # as before: a closing "#" needs no space before it
        ("# Title #  ", "Title"),
        ("#  spaced  ", "spaced"),
        ("# a # #", "a #"),  # one closing run only
        ("###### Six", "Six"),
        ("**Hours:**", "Hours:"),
    ],
)
def test_heading_text_loses_its_closing_hashes(line: str, section: str) -> None:
    assert [(p.section, p.text) for p in _split(f"{line}\nBody text.")] == [(section, "Body text.")]


@pytest.mark.parametrize("line", ["####### seven", "#no space"])
def test_not_a_heading_is_text(line: str) -> None:
    assert [(p.section, p.text) for p in _split(f"{line}\nBody text.")] == [
        ("", f"{line} Body text.")
    ]


@pytest.mark.parametrize(
    ("rule", "header"),
    [
        ("|---|---|", True),
        ("| :-- | --: |", True),
        ("|--|--|", True),
        ("  | --- |---|  ", True),
        ("|x|y|", False),
        ("|-|-|", False),
        ("| - | - |", False),
        ("| a | --- |", False),
        ("|---|x|", False),
    ],
)
def test_table_rule_sets_the_rows_header(rule: str, header: bool) -> None:
    rows = [(p.kind, p.text, p.header) for p in _split(f"|h|i|\n{rule}\n|1|2|")]
    if header:
        assert rows == [("row", "|1|2|", f"|h|i|\n{rule}")]
    else:
        assert rows == [("row", "|h|i|", ""), ("row", rule.strip(), ""), ("row", "|1|2|", "")]


def test_separator_alone_keeps_its_verdicts() -> None:
    rules = ["|---|---|", "| :-- | --: |", "---|---", "|--|", " :---: "]
    others = ["|x|", "|-|", "- a", "---x", "|--|x"]
    assert [bool(passages._SEPARATOR.match(r)) for r in rules] == [True] * len(rules)
    assert [bool(passages._SEPARATOR.match(r)) for r in others] == [False] * len(others)
