"""Lists inside an article that trafilatura left out: put back between the paragraphs it kept.

When trafilatura finds no container it knows (no article-body class, no <article>), it gathers
the page's paragraphs, quotes, code and tables one by one ("wild text") and never its lists: a
price list or a ranked list between two paragraphs of the article is lost, and an edit to it
cannot be seen (tests/corpus/mutations.py: 2 of the 283 realistic edits of bench/versus.py, on
one of its 20 pages). A list of the page (outside <li>) comes back when the paragraph right
before it and the kept block right after it (past any lists next to it) are both in
trafilatura's article, and when it is not mostly link text (a "read more" list between two
paragraphs is what trafilatura drops on purpose). No class or id word decides anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree
    from selectolax.lexbor import LexborHTMLParser, LexborNode

_BLOCKS = ("p", "table", "blockquote", "pre", "h2", "h3", "h4")
MAX_LINK_SHARE = 0.5  # of a list's characters in link text: above, a list of links


def restore(article: etree._Element, tree: LexborHTMLParser, text: str) -> str:
    """Insert into `article` (trafilatura's output, html > body > blocks, whose text is `text`)
    the lists of `tree` that sit between two of its kept blocks and are missing from it; the
    article's text after that."""
    from lxml import html  # trafilatura's output is lxml's: loaded with it

    kept = _said(text)
    if not kept:
        return text
    restored = False
    paragraphs: dict[str, etree._Element] | None = None
    for run in _runs(tree):
        before = _element_before(run[0])
        after = _element_after(run[-1])
        if before is None or after is None or before.tag != "p":
            continue
        said_before, said_after = _said(before.text()), _said(after.text())
        if not said_before or not said_after or said_before not in kept or said_after not in kept:
            continue
        missing = [node for node in run if _said(node.text()) not in kept and _prose(node)]
        if not missing:
            continue
        if paragraphs is None:
            paragraphs = {_said("".join(p.itertext())): p for p in article.iter("p")}
        anchor = paragraphs.get(said_before)
        if anchor is None:
            continue
        for node in reversed(missing):
            anchor.addnext(html.fragment_fromstring(node.html or ""))
        restored = True
    return "".join(article.itertext()) if restored else text


def _runs(tree: LexborHTMLParser) -> list[list[LexborNode]]:
    """Consecutive sibling lists, outermost only."""
    runs: list[list[LexborNode]] = []
    for node in tree.css("ul, ol"):
        if _inside_list(node):
            continue
        before = _element_before(node, lists_too=True)
        if runs and before is not None and before.mem_id == runs[-1][-1].mem_id:
            runs[-1].append(node)
        else:
            runs.append([node])
    return runs


def _inside_list(node: LexborNode) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in ("li", "ul", "ol"):
            return True
        parent = parent.parent
    return False


def _element_before(node: LexborNode, *, lists_too: bool = False) -> LexborNode | None:
    sibling = node.prev
    while sibling is not None and (sibling.tag == "-text" and not sibling.text().strip()):
        sibling = sibling.prev
    if sibling is None or sibling.tag in ("-text", "-comment"):
        return None
    return sibling if lists_too or sibling.tag in _BLOCKS else None


def _element_after(node: LexborNode) -> LexborNode | None:
    sibling = node.next
    while sibling is not None and (
        sibling.tag in ("ul", "ol", "-comment")
        or (sibling.tag == "-text" and not sibling.text().strip())
    ):
        sibling = sibling.next
    return sibling if sibling is not None and sibling.tag in _BLOCKS else None


def _prose(node: LexborNode) -> bool:
    """Not mostly link text."""
    total = len(_said(node.text()))
    linked = sum(len(_said(link.text())) for link in node.css("a"))
    return total > 0 and linked <= MAX_LINK_SHARE * total


def _said(text: str) -> str:
    """The text without its whitespace: a table's cells or a paragraph's lines are joined
    differently by lexbor and by trafilatura."""
    return "".join(text.split())  # the whitespace of str.split is re's \s, at half the cost
