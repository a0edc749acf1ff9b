"""nesting.deeper_than: a page's depth read from its tags as a parser would nest them, in time
linear in the page, before lexbor (quadratic in the depth) sees it."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from selectolax.lexbor import LexborHTMLParser

from lookout.capabilities import nesting

LIMIT = 5000


def _depth(page: str) -> int:
    """How deep lexbor nests `page` (for pages small enough to parse)."""
    deepest, stack = 0, [(LexborHTMLParser(page).root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        child = node.child if node is not None else None
        while child is not None:
            if child.tag != "-text":
                stack.append((child, depth + 1))
            child = child.next
    return deepest


# Each nests n deep in a browser. The previous check (a tag read to its first ">", comments,
# scripts and slashes read as tags and closings, SVG as HTML, an end tag closing all above its
# element) let all but four through: the nested divs, the stray end tags, the CDATA outside SVG,
# the upper case.
DEEP: dict[str, Callable[[int], str]] = {
    "nested divs": lambda n: "<div>" * n,
    "a '>' in a quoted value": lambda n: '<div title="></div>">' * n,
    "an end tag in a comment": lambda n: "<div><!--</div>-->" * n,
    "an end tag in a script": lambda n: "<div><script></div></script>" * n,
    "an end tag in a textarea": lambda n: "<div><textarea></div></textarea>" * n,
    "a slash on an HTML element": lambda n: "<div/>" * n,
    "stray end tags": lambda n: "<div></b>" * n,
    "cells in SVG": lambda n: "<svg>" + "<td>" * n,
    "HTML after SVG ends": lambda n: "<svg><g><div></div>" + "<x/>" * n,
    "HTML in a MathML text point": lambda n: "<math><mi>" + "<x/>" * n,
    "an end tag in SVG's CDATA": lambda n: "<svg>" + "<g><![CDATA[></g>]]>" * n,
    "a tag in a CDATA outside SVG": lambda n: "<div><![CDATA[>" + "<div>" * n + "]]>",
    "upper case": lambda n: "<DiV>" * n + "</dIv>" * n,
    "an end tag a <div> stops": lambda n: "<x><div></x>" * n,
    "a formatting end tag across a block": lambda n: "<b><div></b>" * n,
}
# Each nests shallow in a browser; the previous check refused the first four and the last.
SHALLOW: dict[str, Callable[[int], str]] = {
    "tags in a script": lambda n: "<script>" + '"<div>"' * n + "</script>",
    "tags in a comment": lambda n: "<!--" + "<div>" * n + "-->",
    "tags in a quoted value": lambda n: '<p title="' + "<div>" * n + '">x</p>',
    "tags in a style": lambda n: "<style>" + "<div>" * n + "</style>",
    "self-closed SVG shapes": lambda n: "<svg>" + '<path d="M0 0"/>' * n + "</svg>",
    "cells, items, paragraphs left open": lambda n: (
        "<table>" + "<tr><td>x" * n + "</table><ul>" + "<li>x" * n + "</ul>" + "<p>x" * n
    ),
    "void elements": lambda n: "<br>" * n + "<img src=x>" * n + "<br/>" * n,
    "closed divs": lambda n: "<div>x</div>" * n,
    "a script's end tag in upper case": lambda n: "<div><SCRIPT>x</SCRIPT></div>" * n,
    "a CDATA in SVG": lambda n: "<svg>" + "<![CDATA[<g><g>]]>" * n + "</svg>",
    "misnested and closed": lambda n: "<a><div>x</a></div>" * n + "<i><p>x</i>" * n,
    "a block inside an inline": lambda n: "<span><div>x</div></span>" * n,
}


@pytest.mark.parametrize("page", DEEP.values(), ids=DEEP.keys())
def test_a_page_nested_deep_is_found(page: Callable[[int], str]) -> None:
    assert nesting.deeper_than("<html><body>" + page(LIMIT + 1000), LIMIT)


@pytest.mark.parametrize("page", SHALLOW.values(), ids=SHALLOW.keys())
def test_a_page_nested_shallow_passes(page: Callable[[int], str]) -> None:
    assert not nesting.deeper_than("<html><body>" + page(LIMIT + 1000) + "</body></html>", LIMIT)


@pytest.mark.parametrize("page", [*DEEP.values(), *SHALLOW.values()], ids=[*DEEP, *SHALLOW])
def test_what_is_read_is_what_lexbor_builds(page: Callable[[int], str]) -> None:
    # 700 deep instead of 6,000: lexbor's time grows with the square of the depth.
    html = "<html><body>" + page(700)
    assert nesting.deeper_than(html, 600) == (_depth(html) > 600)


@pytest.mark.parametrize(
    "unit",
    ["<a", "<div title='", '<div title="', "<!--", "<!x", "<script", "<svg><![CDATA[", "</a",
     "<div a=", "<div \n"],
)  # fmt: skip
def test_a_hostile_page_is_read_in_linear_time(unit: str) -> None:
    page = unit * (400_000 // len(unit))
    started = time.process_time()
    nesting.deeper_than(page, LIMIT)
    # A bound on a blow-up, not a speed figure: the previous pattern tried every "<" to the end
    # of the page (80 KB of "<a": 33 s); this reads 400 KB in milliseconds.
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize(
    "page",
    ["<x>" + "<div>" * (LIMIT - 100) + "</x>" * 100_000,  # each end tag: stopped by a <div>
     "<div>" * (LIMIT - 100) + "<b><i><div></b></i></div>" * 20_000],  # taken out from under
    ids=["end tags stopped", "formatting taken out"],
)  # fmt: skip
def test_end_tags_under_a_deep_stack_cost_little(page: str) -> None:
    started = time.process_time()
    assert not nesting.deeper_than(page, LIMIT)
    assert time.process_time() - started < 1.0  # a bound on a blow-up, as above


def test_a_tag_left_open_hides_nothing_after_it_but_counts() -> None:
    assert nesting.deeper_than("<div>" * LIMIT + "<span title='", LIMIT)
    assert not nesting.deeper_than("<div>" * (LIMIT - 1) + "<!-- <div><div>", LIMIT)
