"""trafilatura's XPaths as prunes.py rewrites them select what trafilatura's own select, on real
pages (tests/corpus), and extraction reads every page the same with and without them."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
from lxml import etree, html

from lookout.capabilities import content, prunes

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# A third of the wcxb sample (products, listings, forums, docs...), a sixth of the articles.
PAGES = (
    sorted((CORPUS / "wcxb" / "sample" / "html").glob("*.html.gz"))[::3]
    + sorted((CORPUS / "articles" / "html").glob("*.html.gz"))[::6]
)
# The costly ones (the module docstring): a trafilatura that no longer lets them be rewritten
# costs ~2 ms a page more, which someone should look at.
COSTLY = [
    ("OVERALL_DISCARD_XPATH", 0),
    ("OVERALL_DISCARD_XPATH", 1),
    ("TEASER_DISCARD_XPATH", 0),
    ("REMOVE_COMMENTS_AND_LISTS_XPATH", 0),
    ("RAW_TREE_PRUNE_XPATH", 0),
]
_RE = {"re": "http://exslt.org/regular-expressions"}


def _trees() -> list[etree._Element]:
    """Each page as lxml parses it, and as trafilatura has cleaned and converted it (where its
    lists are <list> and <item>, which some of the expressions name)."""
    from trafilatura import htmlprocessing

    options = content._options()  # installs the rewrite, as a reader does
    trees = []
    for page in PAGES:
        raw = html.fromstring(gzip.decompress(page.read_bytes()))
        trees.append(raw)
        cleaned = htmlprocessing.tree_cleaning(copy.deepcopy(raw), options)
        trees.append(htmlprocessing.convert_tags(cleaned, options))
    return trees


@pytest.fixture(scope="module")
def trees() -> list[etree._Element]:
    return _trees()


def test_the_costly_expressions_are_rewritten_in_trafilatura_s_lists() -> None:
    from trafilatura import xpaths

    prunes.install()
    done = {(name, index): new for name, index, _, new in prunes.REWRITTEN}

    for name, index in COSTLY:
        assert (name, index) in done, f"{name}[{index}] is no longer rewritten"
        assert getattr(xpaths, name)[index].path == done[name, index]


def test_every_rewritten_expression_selects_the_same_elements_on_real_pages(
    trees: list[etree._Element],
) -> None:
    prunes.install()
    assert len(prunes.REWRITTEN) >= len(COSTLY)
    for name, index, original, rewritten in prunes.REWRITTEN:
        theirs = etree.XPath(original, namespaces=_RE)
        ours = etree.XPath(rewritten, namespaces=_RE)
        found = 0
        for tree in trees:
            expected = theirs(tree)
            assert ours(tree) == expected, f"{name}[{index}] differs"
            found += len(expected)
        if (name, index) in COSTLY[:2]:
            assert found > 0, f"{name}[{index}] selects nothing on the corpus: not a check"


def test_what_each_costly_expression_prunes_is_pruned_either_way() -> None:
    # One element each of them selects (the corpus has no infinite scroll), beside elements with
    # none of the attributes they read.
    page = html.fromstring(
        "<html><body><div><p>plain</p><p class='share-this'>x</p><span id='nav-1'>y</span>"
        "<div style='display:none'>z</div><section aria-hidden='true'>w</section>"
        "<div class='teaser-box'>t</div><ul id='comments'><li>c</li></ul>"
        "<div id='infinite-scroll'><p>more</p></div><table><tr><td>1</td></tr></table>"
        "</div></body></html>"
    )
    prunes.install()
    assert prunes.REWRITTEN
    for name, index, original, rewritten in prunes.REWRITTEN:
        theirs = etree.XPath(original, namespaces=_RE)(page)
        assert etree.XPath(rewritten, namespaces=_RE)(page) == theirs, f"{name}[{index}]"
        if (name, index) in COSTLY:
            assert theirs, f"{name}[{index}] selects nothing here: not a check"


@pytest.mark.parametrize(
    "path",
    [
        ".//*[not(@class)]",  # true where the attribute is absent
        ".//*[contains(@class, '')]",  # an empty literal holds for ""
        ".//*[re:test(@class, 'a|^$')]",  # a pattern that matches ""
        ".//*[string-length(@id) < 3]",  # a function not known to be false on ""
        ".//*[contains(@class, 'x') or .//h1]",  # reads more than the element's attributes
        ".//*[@class = 'x' or . = 'y']",  # ...its text
        ".//*[@class = 'x' or @id > 3]",  # a number: absent reads as NaN, but not checked
        ".//*[contains(@class, 'x') or .//h1] | .//p",  # a union of such paths
        # True, or true for "", whatever the attributes:
        ".//*[@x or 'yes']",
        ".//*[@x or 'a'='a']",
        ".//*[@x or re:test('abc', 'b')]",
        ".//*[contains('abc', @x)]",
        ".//*[contains(@x, @y)]",
        ".//*[translate(@x, 'a', 'b') != 'c']",
        ".//*[contains(@x, 'a') = contains(@y, 'b')]",
        ".//*[contains(@x = 'y', 'fa')]",  # a boolean read as a string ("false")
        ".//*[re:test(translate(@x, 'a', 'b'), '^$')]",
        ".//*[re:test (@x, '^$')]",
        ".//*[re:test(@x, '(')]",  # a pattern Python cannot compile
        # Numbers, which count positions among siblings, not in the union:
        ".//*[self::p or self::span][(1)]",
        ".//*[self::p or self::span][-(-1)]",
        ".//*[self::p or self::span][@n - 0]",
        # Prefixes other than re:, which the rewrite would not bind:
        ".//*[@xl:href]",
        ".//*[self::div][pre:test(@x, 'a')]",
        "(.//article)[1]",  # no `.//*`
    ],
)
def test_an_expression_that_may_hold_without_its_attributes_is_left_alone(path: str) -> None:
    assert prunes.rewrite(path) is None


def test_a_name_test_becomes_a_union_unless_a_predicate_counts_positions() -> None:
    plain = prunes.rewrite(".//*[self::div or self::p][contains(@class, 'ad')]")
    counted = prunes.rewrite(".//*[self::div or self::p][contains(@class, 'ad')][1]")

    assert plain == "(.//div | .//p)[@class][contains(@class, 'ad')]"
    assert counted == ".//*[self::div or self::p][@class][contains(@class, 'ad')][1]"
    # A number as a predicate is a position too.
    numbered = prunes.rewrite(".//*[self::div or self::p][contains(@class, 'ad')][count(.//p)]")
    assert numbered == ".//*[self::div or self::p][@class][contains(@class, 'ad')][count(.//p)]"


def test_a_pattern_is_tested_only_where_its_attribute_is() -> None:
    rewritten = prunes.rewrite(
        ".//*[self::div][1][re:test(@id|@class, 'nav') or re:test(@style, '^$|x')]"
    )

    # `^$|x` matches "": an absent style would pass it, so it is tested everywhere.
    assert rewritten == (
        ".//*[self::div][1][((@id or @class) and re:test(@id|@class, 'nav')) or "
        "re:test(@style, '^$|x')]"
    )


def test_a_union_is_rewritten_path_by_path() -> None:
    rewritten = prunes.rewrite(
        ".//aside|.//div[contains(@class|@id, 'f')] | .//*[re:test(@class, 'x', 'i') or "
        "re:test(@id, 'x|y', 'i')]|(.//*[self::p][contains(@class, 'a|b')])[1]"
    )

    # A `|` in a predicate or a string is no union's; a member of no known form stays as it is.
    assert rewritten == (
        ".//aside|.//div[contains(@class|@id, 'f')] | .//*[@class or @id][((@class) and "
        "re:test(@class, 'x', 'i')) or ((@id) and re:test(@id, 'x|y', 'i'))]|(.//*[self::p]"
        "[@class][contains(@class, 'a|b')])[1]"
    )
    assert prunes.rewrite(".//aside | .//footer") is None  # nothing to rewrite in it


def test_an_expression_modules_hold_by_name_is_rewritten_in_each_of_them() -> None:
    baseline, settings = sys.modules["trafilatura.baseline"], sys.modules["trafilatura.settings"]

    content._options()  # installs the rewrite, as a reader does

    done = {name: new for name, index, _, new in prunes.REWRITTEN if index is None}
    assert "BASIC_CLEAN_XPATH" in done, "html2txt's XPath is no longer rewritten"
    assert baseline.BASIC_CLEAN_XPATH is settings.BASIC_CLEAN_XPATH
    assert baseline.BASIC_CLEAN_XPATH.path == done["BASIC_CLEAN_XPATH"]
    with prunes.as_shipped():
        assert baseline.BASIC_CLEAN_XPATH.path == settings.BASIC_CLEAN_XPATH.path
        assert "[@class or @id]" not in baseline.BASIC_CLEAN_XPATH.path
    assert baseline.BASIC_CLEAN_XPATH.path == done["BASIC_CLEAN_XPATH"]


def test_a_rewrite_that_fails_to_compile_or_to_run_leaves_trafilatura_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import trafilatura

    theirs = [etree.XPath(".//*[contains(@class, 'a')]"), etree.XPath(".//*[@id]")]
    listed = list(theirs)
    held = types.ModuleType("trafilatura.held")
    held.HELD = by_name = etree.XPath(".//*[contains(@id, 'b')]")  # type: ignore[attr-defined]
    monkeypatch.setattr(trafilatura, "xpaths", type("X", (), {"LISTED": listed}))
    monkeypatch.setattr(prunes, "_trafilatura_modules", lambda: [held])
    # a syntax error; an error when run (twice)
    broken = iter([".//*[[", ".//*[$undefined]", ".//*[$undefined]"])
    monkeypatch.setattr(prunes, "rewrite", lambda path: next(broken))
    monkeypatch.setattr(prunes, "REWRITTEN", [])
    monkeypatch.setattr(prunes, "_SWAPPED", [])

    prunes._install()

    assert listed == theirs and held.HELD is by_name and prunes.REWRITTEN == []
    assert next(broken, None) is None  # every expression was tried


def test_as_shipped_puts_trafilatura_s_expressions_back_for_the_block() -> None:
    from trafilatura import xpaths

    prunes.install()
    name, index, original, rewritten = prunes.REWRITTEN[0]

    with prunes.as_shipped():
        assert getattr(xpaths, name)[index].path == original
    assert getattr(xpaths, name)[index].path == rewritten


_READ = """
import gzip, hashlib, json, sys
from lookout.capabilities import extract, prunes
if sys.argv[1] == "without":
    prunes.install = lambda: None
out = {"rewritten": None}
for path in json.loads(sys.argv[2]):
    page = gzip.decompress(open(path, "rb").read())
    read = extract.extract(page, url="https://example.org/a", formats=("markdown", "text"))
    seen = repr((read.markdown, read.text, read.content_hash))
    out[path] = hashlib.sha256(seen.encode()).hexdigest()
out["rewritten"] = len(prunes.REWRITTEN)  # the extraction installed it, or not
print(json.dumps(out))
"""


def test_pages_read_the_same_with_and_without_the_rewrite() -> None:
    paths = json.dumps([str(page) for page in PAGES[::2]])
    reads = [
        subprocess.run(
            [sys.executable, "-c", _READ, which, paths],
            capture_output=True,
            text=True,
            check=True,
            timeout=100,
        ).stdout
        for which in ("with", "without")
    ]

    with_it, without = json.loads(reads[0]), json.loads(reads[1])
    assert with_it.pop("rewritten") >= len(COSTLY) and without.pop("rewritten") == 0
    assert with_it == without
    assert len(with_it) == len(PAGES[::2]) > 40
