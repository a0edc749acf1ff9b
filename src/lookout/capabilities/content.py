"""Which part of a page is its own content: trafilatura for prose, the page's region for the rest.

Measured on tests/corpus/articles (181 real news and blog pages with hand-made ground truth, the
shingle metric of Zyte's article-extraction benchmark; bench/extract.py), CPU per page on this
machine (2 shared cores, noisy: compare with trafilatura's default, measured in each run):

    what (output scored as text)                         F1     precision  recall  CPU ms/page
    selectors + class-word list (what this replaced)     0.761  0.674      0.873     2.7
    trafilatura 2.3 default (with its fallbacks)         0.960  0.942      0.978    15-21
    trafilatura fast=True (no fallback)                  0.962  0.946      0.979    12-14
    trafilatura fast, favor_precision                    0.946  0.947      0.946    10.6
    trafilatura fast, favor_recall                       0.959  0.941      0.978    11.9
    lexbor drops scripts, styles, svg..., trafilatura fast   0.962  0.946  0.979     8.9-9.9
      ...asked for HTML with links / images / formatting     0.958 / 0.948 / 0.963 (as text)
    resiliparse 2.0 main_content                         0.898  0.830      0.979     1.2
    the page's region alone (see below), 94 <article> pages  0.876  0.784  0.993      -
    this module, as extract() runs it for web.scrape     0.958  0.936      0.980   0.71x trafilatura
      ...before trafilatura's XPaths were rewritten (prunes.py; same hour)         0.79x
      ...without the default-mode retry (below)          0.951  0.927      0.975   0.68x
      ...trafilatura favor_recall instead (skips its retry)  0.949  0.925  0.975   -11 % CPU
      ...favor_precision                                  0.940  0.930      0.950   -4 %
      ...include_formatting off                           0.951  0.928      0.975   -3 % (noise)

So trafilatura runs in fast mode on a page lexbor has stripped of what is never content and of
what HTML marks as chrome (it parses a fraction of the bytes), through bare_extraction and its
own HTML conversion (extract() also fingerprints the text: 21 % of its time on bench/corpus.py),
without a URL (resolving links through courlan was 8 %; html-to-markdown resolves them). Links
and images are asked for because the markdown keeps them (the text leaves images out); with
images trafilatura also keeps figures and their captions, which the benchmark's truth leaves out:
without them F1 is 0.958 (precision 0.941). Removing headers and footers before trafilatura cost
0.004 F1 (it reads them to place the article): they go after. Lists of the article that
trafilatura's "wild text" pass leaves out are put back between the paragraphs it kept
(capabilities/lists.py; bench/extract.py, best of 3, with and without it one after the other:
F1 0.951, P 0.927, R 0.975 and 0.73x trafilatura's CPU both; trafilatura's favor_recall, which
keeps them too, read F1 0.949 and took a cookie bar and an ad into the page it fixed).

Where a page's CPU goes (2026-12-02, tests/corpus/articles, thread CPU, best of 3, load ~9 on
2 cores): two thirds are trafilatura's own work on the pruned page (its lxml parse 10 %, its
XPath prunes of the raw tree 15 %, two tree copies 5 %, the balanced mode's page text for its
recall retry 11 %, its main extractor 40 % of its time); ours is the lexbor parse (~0.6 ms),
html-to-markdown (0.3 ms markdown, 0.6 ms text), the list restore (~0.4 ms), metadata (0.3 ms)
and the hash. Made cheaper without changing one output (782 reads of the corpora compared):
one trafilatura Extractor for all pages, <meta> and JSON-LD read once, the article's text
joined once, its prose measures only where the page does not say it is an article. So even
with nothing of ours, trafilatura fast on this input costs ~0.5x trafilatura's default: the
0.5x aim needs a cheaper extractor, not a cheaper wrapper.

trafilatura is built for articles. On the non-article pages of tests/corpus/kinds it loses the
very content a user watches (a product's name and price, every event's title and date in a
calendar) or, finding no article, falls back to the page's whole text as one paragraph, nav
included, tables flattened; resiliparse drops every item of a search-result listing. So the
page's *region* is computed too: the single <main> / [role=main] / <article> if there is one,
else the body, without what HTML itself marks as chrome (nav, aside, header and footer outside
an article or main, ARIA landmarks banner / navigation / contentinfo / complementary / search,
dialogs, form controls, hidden elements, 1-pixel images). No class or id word decides anything.
The region wins when trafilatura fell back to the whole page, or kept under half of the region
and no paragraph of prose (PROSE_WORDS: a product, a calendar). A page that says it is an article
(og:type, schema.org @type) takes trafilatura's; one that says it is a product, event, listing,
menu... takes its region without running trafilatura. A word-count rule instead (fewer than 100
words kept) misfired on three short real articles (F1 0.940). On the 181 articles, all 181 take
trafilatura's (bench/extract.py prints the count). A shop's page can say it is both (WordPress
SEO plugins put an Article in every page's schema.org graph, WooCommerce a Product): it takes
trafilatura's, which on such a page is the product's description, without the product's name,
price or availability (3 of the 29 product pages of bench/kinds.py's sample). There the block
that names the product goes first: the first <h1> that says a name the page gives its product
(schema.org Product name, og:title of an og:type product), with its ancestors up to the one
beside where the article starts (a shop's summary: name, price, stock, rating). bench/kinds.py,
2026-12-07: those 3 pages keep name and price; dev products F1 0.580 -> 0.567 (WCXB's truth for
them is the description alone: 1.00 -> 0.97 and 0.50 -> 0.45), dev 0.721 -> 0.720; none of the
other 1,137 readings of the corpora (tests/corpus, bench/corpus.py; main content and whole page)
changes.
A shop may say it is a product in microdata only (`itemscope itemtype=".../Product"`):
metadata reads a top-level microdata product as it reads a JSON-LD one. bench/kinds.py,
2026-12-07: a watch shop's page (0586) that took trafilatura's reading of its reviews keeps its
price, description and specifications (0.14 -> 0.34, trafilatura 0.34), a game store's (3075)
0.43 -> 0.40; dev products 0.567 -> 0.581, dev 0.727 -> 0.731, test unchanged; no other of the
1,140 readings changes. Every top-level microdata type read as declared instead went worse
(dev 0.727 -> 0.726, test 0.767 -> 0.761: 9 forum threads and Q&A pages lower, read as their
region; a category page 1.00 -> 0.76): only products are read from microdata.

trafilatura's HTML writes inline code as a block (<pre>): inside a paragraph an HTML parser
closes the paragraph at it, and the markdown fenced every code word apart from its sentence
(Python's logging HOWTO: 468 fence lines). Such <pre>s (in a <p>) go back to inline <code>,
with a space where trafilatura dropped the one between the code and a word beside it (the block
kept them apart). Of 1,140 readings 21 change, all main content of documentation pages:
single-line fences amid text 1,080 -> 72; the same words in every text, no hash changes;
bench/kinds.py documentation F1 unchanged (dev 0.887, test 0.907); two WCXB must-keep snippets
are no longer found because they carry the old rendering's own artefact ("with get() , post()
, etc", "NOT MATERIALIZED .") where the text now reads as the page does.

A region (and the whole page, only_main_content=false) is read with a space between two inline
elements side by side whose words would run together (`<span>Merrell</span><span>Moab</span>`, a
size picker's `<a>XS</a><a>S</a>`: the site's CSS shows them apart; _unglue). bench/kinds.py,
2026-12-07: dev 0.720 -> 0.727 (listings 0.713 -> 0.745: IMDb's chart 0.37 -> 0.92, its year,
length and rating no longer one word; category pages 0.599 -> 0.613, must-keep snippets found
0.500 -> 0.602), test 0.767 unchanged; of 1,140 readings of the corpora 133 change (14 main
content, 119 whole pages: menus and footers of the article pages), each by spaces put in, none
of the articles' main content.

Non-article pages are measured by bench/kinds.py: 174 real pages of Murrough Foley's
web-content-extraction-benchmark (CC-BY-4.0; products, category pages, listings, forums,
documentation, service pages; a dev split to tune on, a held-out test split to check on), the
same shingle metric. There (2026-12-06), against trafilatura's default: F1 0.717 / 0.695 on
dev, 0.767 / 0.791 on test; products are the weak kind (0.58 / 0.61 on dev: a region that is
the whole main keeps "Related products", cart and shipping blocks). Tried there and not kept:
a page's JSON-LD types outranking its og:type (dev 0.717 -> 0.714, boilerplate snippets kept
0.094 -> 0.121: product pages whose og:type says article read worse as their region); keeping
aria-hidden content (dev +0.006, test -0.002); sending an undeclared page to its region when
trafilatura keeps under a quarter of it (dev +0.02, test +0.004, but one of the 12 undeclared
articles of the article corpus falls from 0.90 to 0.16).

Fast mode skips trafilatura's readability and jusText fallbacks, and on a few real pages that
is what finds the article: MacRumors writes its article as text between <br>s in a <div> (fast
mode took a sidebar's 53 words), a Brazilian city hall's news page has no container fast mode
knows (it fell back to the whole page, 900 words of menus). So a page fast mode under-read, by
trafilatura's own test for retrying (a text under 3,000 characters and a fifth of the page's,
core.py's ESCALATION_*), or whose article it fell back to the whole page for or found empty, is
read again in trafilatura's default mode (its choice among its extractor, readability and
jusText), kept unless that too is the whole page. 9 of the 181 are read twice, ~36 ms each;
2 read differently (true shingles 0.00 to 0.90 and 0.09 to 0.81 of the page's), 7 the same, and
tests/corpus/kinds' div-soup page loses its header and footer links; F1 0.951 to 0.958, CPU
0.68x to 0.78x trafilatura's (bench/extract.py, 3 runs). Retrying instead on a
word count (fewer than 100 or 150 words) also fixed those two but, at 150, broke a short
article of 143 words that the default mode reads worse; trafilatura's test leaves it alone.
The synthetic pages of bench/corpus.py never trigger it (bench/scrape.py is unchanged).
Such a page is also read in fast mode without links, kept if that reads more than twice the
words of the reading chosen above (where both found nothing: if it is not short itself). Asked
to keep links, trafilatura's link-density tests can take a thread's replies for link lists (a
real travel forum: 101 words kept, 297 in default mode, the whole thread, 1,249, without links).
Its markdown then has no links; the page's `links` still lists them. bench/kinds.py, same hour:
2 of 174 pages change (a forum thread 0.39 -> 1.00, a listing 0.66 -> 0.80), dev 0.717 -> 0.721,
test 0.767 unchanged; none of the 181 articles reads differently; CPU 0.79x -> 0.81x
trafilatura's on them (bench/extract.py, one run each).

Bounds: lexbor parses a page nested N deep in O(N^2) (20,000 levels: 0.6 s; 200,000: over a
minute) and trafilatura is superlinear past ~20,000 elements (200,000: 62 s). A page nested
deeper than MAX_DEPTH is refused (TooComplex); one with more than MAX_ELEMENTS elements skips
trafilatura and is read as its region (linear: 0.5 s for 2 MB and 200,000 elements).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import TYPE_CHECKING, Literal

from lookout.capabilities import links, lists, nesting, prunes

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from lxml import etree
    from selectolax.lexbor import LexborHTMLParser, LexborNode
    from trafilatura.settings import Extractor

# Chromium's parser stops nesting at 512, no real page comes near; lexbor spends 25 ms on a page
# nested 5,000 deep (0.6 s at 20,000), and a page of fewer tags than that needs no scan.
MAX_DEPTH = 5000
MAX_ELEMENTS = 10_000  # trafilatura costs ~20 us an element up to here, then grows faster
# A page streams a few dozen parts (52 on a real product page).
MAX_STREAMED_PARTS = 200
MIN_NAME = 3  # characters of a product's name, to be looked for in a heading
MAX_CLIMB = 12  # ancestors of a product's heading searched for where its description starts
OPENING_WORDS = 5  # the start of an article's first block, to find where it is in the page
_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "td", "dd")
PROSE_WORDS = 25  # a paragraph of this many words is prose (two sentences or so)
# og:type and schema.org @type values, lowercased.
_ARTICLES = frozenset(
    [
        "article",
        "newsarticle",
        "blogposting",
        "reportagenewsarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "reviewnewsarticle",
        "techarticle",
        "scholarlyarticle",
        "socialmediaposting",
        "liveblogposting",
    ]
)
_NOT_ARTICLES = frozenset(
    [
        "product",
        "product.item",
        "og:product",
        "productgroup",
        "offer",
        "aggregateoffer",
        "event",
        "itemlist",
        "searchresultspage",
        "collectionpage",
        "menu",
        "restaurant",
        "foodestablishment",
        "store",
        "localbusiness",
        "faqpage",
        "qapage",
        "discussionforumposting",
        "jobposting",
        "recipe",
    ]
)
# Never content, whatever the page: dropped before anything else is measured.
JUNK = "script, style, noscript, template, svg, iframe, object, embed, canvas, link, meta, head"
_CHROME = ", ".join(
    (
        "nav, aside, dialog, button, select, input, textarea, [hidden], [aria-hidden=true]",
        "[role=navigation], [role=banner], [role=contentinfo], [role=complementary]",
        "[role=search], [role=dialog], [role=alertdialog]",
        'img[width="0"], img[width="1"], img[height="0"], img[height="1"]',  # tracking pixels
    )
)
_WORD_CHARACTER = re.compile(r"\w")
# Elements shown in a line of text (no <sub> / <sup>: they attach to the word before, _unglue).
_INLINE = frozenset(
    ["a", "abbr", "b", "bdi", "cite", "code", "data", "em", "i", "label", "mark", "q", "s",
     "small", "span", "strong", "time", "u"]
)  # fmt: skip

_INLINE_HTML = _INLINE | {"del", "ins", "sub", "sup"}  # trafilatura's inline output
_ANY_INLINE = ":is(" + ", ".join(sorted(_INLINE)) + ")"
_SIDE_BY_SIDE = f"{_ANY_INLINE} + {_ANY_INLINE}"

Path = Literal["article", "region", "page"]


@functools.cache
def _options(fast: bool = True, links: bool = True) -> Extractor:
    """Made once each: building trafilatura's Extractor per call (its config read anew) was
    0.2-0.3 ms a page; trafilatura never changes the one it is given (it copies it to retry in
    recall mode). `fast=False` is trafilatura's default mode (its readability and jusText
    fallbacks), for pages the fast mode under-reads (_extract). trafilatura loads here, at the
    first page it reads (~85 ms of import, ~3 MiB RSS beside what a web process has loaded
    anyway, 56 modules): web and worker processes hand pages over 2 KB to the readers
    (capabilities/readers.py), whose forkserver preloads it."""
    from trafilatura import settings

    prunes.install()  # trafilatura's XPaths, rewritten to cost less (prunes.py)
    if not fast:
        prunes.stoplist_as_set()  # jusText's, used by the default mode only
    return settings.Extractor(
        output_format="html",
        fast=fast,
        comments=False,
        links=links,
        images=True,
        tables=True,
        formatting=True,
        with_metadata=False,
    )


class TooComplex(Exception):
    """The page nests its elements too deeply to be read within a CPU budget."""


def check_nesting(document: str) -> None:
    """Raise TooComplex if `document` nests more than MAX_DEPTH elements deep, as a parser would
    nest them, counted from its tags before any parser sees the page (nesting.py)."""
    if nesting.deeper_than(document, MAX_DEPTH):
        raise TooComplex(f"the page nests elements more than {MAX_DEPTH} deep")


def main_html(
    tree: LexborHTMLParser,
    kinds: frozenset[str] = frozenset(),
    *,
    tags: int = 0,
    names: Collection[str] = (),
) -> tuple[str, str, Path]:
    """(HTML, text) of the page's own content and which path found it. `tree` is pruned of
    JUNK already; chrome is removed from it in place. `kinds`: what the page says it is;
    `names`: what it says its product is called (metadata.read_with_kinds). The text joins
    text nodes with nothing between them: wrapping or splitting elements (markup only) cannot
    change it, a change of the words does. `tags`: how many start tags the page's source has
    (cheaper to count than lexbor's elements)."""
    declared = _declared(kinds)
    small = tags <= MAX_ELEMENTS
    drop_chrome(tree)  # trafilatura drops it too, after parsing it: 15-30 % of its time here
    found = _extract(tree.html or "", tree) if small and declared != "other" else None
    if found is not None and declared == "article" and not found.empty:
        # The page says it is one: no region needed. A shop's page may say it is an article
        # and a product: the product's name, price and availability go with its description.
        named = _naming_block(tree, found, names) if names else None
        if named is not None:
            html = found.html.replace("<body>", "<body>" + _html(named), 1)
            return html, _text(named) + " " + found.text, "article"
        return found.html, found.text, "article"
    region = region_of(tree)
    if found is None or not _prefer_article(found, region):
        _unglue(region)
        return _html(region), _text(region), "region"
    return found.html, found.text, "article"


def _naming_block(
    tree: LexborHTMLParser, article: Article, names: Collection[str]
) -> LexborNode | None:
    """On a page that says it is a product, the block that names the product, when
    trafilatura's article (the product's description, on such a page) leaves the name out: the
    first <h1> that says one of `names` (or the start of one), with what is around it up to
    where the article starts (a shop's summary: name, price, availability, rating, short
    description). The heading alone if the article's start is not found within MAX_CLIMB
    ancestors (each is read whole: the bound keeps a deeply nested page linear); None if the
    article has the name."""
    wanted = [name for name in map(_squash, names) if len(name) >= MIN_NAME]
    heading = next(
        (
            node
            for node in tree.css("h1")
            if len(said := _squash(node.text(separator=" "))) >= MIN_NAME
            and any(name in said or name.startswith(said) for name in wanted)
        ),
        None,
    )
    if heading is None or _squash(heading.text(separator=" ")) in _squash(article.spoken):
        return None
    opening = _opening(article)
    block = heading
    for _ in range(MAX_CLIMB if opening else 0):
        parent = block.parent
        if parent is None or parent.tag == "body":
            break
        if opening in _squash(parent.text(separator=" ")):
            return block
        block = parent
    return heading


def _opening(article: Article) -> str:
    """The first words of the article's first block of a few words, to find it in the page."""
    for node in article.tree.iter(*_BLOCKS):
        words = " ".join(node.itertext()).split()
        if len(words) >= OPENING_WORDS:
            return _squash(" ".join(words[:OPENING_WORDS]))
    return ""


def _squash(text: str) -> str:
    return " ".join(text.casefold().split())


def _declared(kinds: frozenset[str]) -> str | None:
    """ "article" or "other" when the page's og:type / schema.org types say so, else None."""
    if kinds & _ARTICLES:
        return "article"
    return "other" if kinds & _NOT_ARTICLES else None


def _prefer_article(article: Article, region: LexborNode | None) -> bool:
    """Whether trafilatura's article is the page's content rather than its whole region."""
    kept = article.words
    available = _words(region.text(separator=" ")) if region is not None else 0
    if kept == 0 or available == 0:
        return kept > 0
    if kept >= available or article.whole_page:
        return False  # trafilatura found no article and fell back to the whole page
    # An article has prose; a product, a calendar, a listing has short items.
    return article.longest_block >= PROSE_WORDS or 2 * kept >= available


def page_html(tree: LexborHTMLParser) -> tuple[str, str]:
    """(HTML, text) of the whole body (JUNK already gone): only_main_content=false."""
    _unglue(tree.body)
    return _html(tree.body), _text(tree.body)


def _unglue(node: LexborNode | None) -> None:
    """Put a space between two inline elements side by side whose texts would otherwise run
    into one word: a listing's card writes `<span>Merrell</span><span>Moab 3 Mid</span>`, a
    colour picker `<a>Blue</a><a>Red</a>`, shown apart by the site's CSS and read as
    "MerrellMoab 3 Mid", "BlueRed" (a watch asked about "Merrell Moab 3" would not find it).
    Only where the first element's text ends and the second's begins with a letter or a digit,
    and neither is <sub> / <sup>, which attach (H<sub>2</sub>O). lexbor finds the inline
    elements that follow an inline element (_SIDE_BY_SIDE); each is looked at once, with the
    node before it (visiting every node of the region in Python instead: 0.37 against 0.22 ms a
    page of bench/corpus.py, the same 1,140 readings of the corpora)."""
    if node is None:
        return
    glued: list[LexborNode] = []
    for right in node.css(_SIDE_BY_SIDE):
        left = right.prev  # a text or a comment between them: not side by side
        if left is None or left.tag not in _INLINE:
            continue
        last, first = left.last_child, right.child
        if (
            last is not None
            and last.tag == "-text"
            and first is not None
            and first.tag == "-text"
            and (last.text_content or " ")[-1].isalnum()
            and (first.text_content or " ")[0].isalnum()
        ):
            glued.append(left)
    for left in glued:
        left.insert_after(" ")


@dataclasses.dataclass(frozen=True)
class Article:
    """What trafilatura took for the page's article. `words` and `longest_block` are read only
    for a page that does not say it is an article (most of the corpus says so) or that fast mode
    under-read (_extract); `whole_page` for every page (_under_read)."""

    html: str
    text: str
    tree: etree._Element = dataclasses.field(repr=False, compare=False)  # html > body > blocks

    @functools.cached_property
    def spoken(self) -> str:
        """The article's text, its text nodes apart (`text` joins them as they are)."""
        return " ".join(self.tree.itertext())

    @functools.cached_property
    def words(self) -> int:
        return _words(self.spoken)

    @property
    def empty(self) -> bool:
        """Not one word character (a letter, a digit): punctuation alone is no article."""
        return _WORD_CHARACTER.search(self.text) is None

    @functools.cached_property
    def longest_block(self) -> int:
        """Words in the longest line of a paragraph or list item. By line: when trafilatura
        finds no article it returns the page's text as one <p>, a line per text node, which is
        no paragraph of prose."""
        blocks = ("".join(n.itertext()) for n in self.tree.iter("p", "li", "blockquote", "dd"))
        return max((_words(line) for block in blocks for line in block.split("\n")), default=0)

    @functools.cached_property
    def whole_page(self) -> bool:
        """trafilatura found no article and gave the page's text as one <p>."""
        parts = list(self.tree[0]) if len(self.tree) else []
        return len(parts) == 1 and parts[0].tag == "p" and "\n" in (parts[0].text or "")


def _extract(source: str, tree: LexborHTMLParser) -> Article | None:
    """trafilatura's article in fast mode; when fast mode under-read, in its default mode, or in
    fast mode without links if that reads more than twice as much (see the module docstring)."""
    found = _trafilatura(source, tree)
    if not _under_read(found, tree):
        return found
    retried = _trafilatura(source, tree, fast=False)
    if retried is None or (retried.whole_page and found is not None):
        retried = found
    unlinked = _trafilatura(source, tree, links=False)
    if unlinked is None or unlinked.whole_page:
        return retried
    if retried is None:  # nothing read with links: take it only if it is not short too
        return None if _under_read(unlinked, tree) else unlinked
    return unlinked if unlinked.words > 2 * retried.words else retried


def _under_read(found: Article | None, tree: LexborHTMLParser) -> bool:
    """Whether fast mode missed the article: it found nothing or fell back to the whole page,
    or (trafilatura's own test for retrying, core.py) kept a short text covering little of the
    page's text."""
    from trafilatura import core  # loaded already: `found` is its work

    if found is None or found.empty or found.whole_page:
        return True
    kept = len(found.text.strip())
    if kept >= core.ESCALATION_MAX_LENGTH:  # 3,000 characters in trafilatura 2.3
        return False
    page = " ".join(tree.body.text(separator=" ").split()) if tree.body is not None else ""
    return kept < core.ESCALATION_PAGE_SHARE * len(page)  # 0.2


def _trafilatura(
    source: str, tree: LexborHTMLParser, *, fast: bool = True, links: bool = True
) -> Article | None:
    """What trafilatura takes for the article, None if it finds nothing."""
    # bare_extraction, not extract(): extract() also fingerprints the text (a simhash, 21 % of
    # its time on bench/corpus.py) and pretty-prints the HTML. No url: trafilatura would
    # resolve every link through courlan (8 % here); html-to-markdown resolves them anyway.
    import trafilatura  # loaded with _options(), at the first page read
    from lxml import etree  # with trafilatura, which parses with it
    from trafilatura import htmlprocessing

    document = trafilatura.bare_extraction(source, options=_options(fast, links))
    body = getattr(document, "body", None)
    if body is None:
        return None
    # trafilatura keeps an <ol> as <list rend="ol"> but writes every list back as <ul>: a
    # ranked list's numbers are content (a reorder is an edit), so ordered lists stay ordered.
    ordered = [node for node in body.iter("list") if node.get("rend") == "ol"]
    html = htmlprocessing.convert_to_html(body)
    for node in ordered:
        node.tag = "ol"
    for block in html.iter("pre"):  # trafilatura writes a code block as <pre><pre>
        if block.getparent() is not None and block.getparent().tag == "pre":
            block.tag = "code"
    # ...and inline code (`<p>If <code>ONLY</code> is specified`) as <pre> too: in a paragraph
    # an HTML parser closes the paragraph at it, and the markdown fenced each word apart.
    _unlink_scripts(html)
    text = lists.restore(html, tree, "".join(html.itertext()))
    for block in html.xpath(".//p//pre"):  # after the hash's text: only markup changes here
        block.tag = "code"
        _spaced(block)
    return Article(etree.tostring(html, encoding="unicode"), text, html)


def _spaced(code: etree._Element) -> None:
    """A space on either side of inline `code` where a word would run into it: trafilatura
    drops the whitespace between elements ("than <a><code>NullHandler</code></a> <em>to" came as
    "NullHandler" and "to" side by side); as a block the code stood apart, and its words still
    do. Each side is looked for past the inline elements the code ends (or starts) with."""
    said = "".join(code.itertext())
    if not said:
        return
    right = code  # the outermost inline element `code` ends
    while not (right.tail or "") and right.getnext() is None and _wraps(right.getparent()):
        right = right.getparent()
    following = right.getnext()
    after = right.tail or ("".join(following.itertext()) if following is not None else "")
    if not said[-1].isspace() and after[:1].isalnum():
        right.tail = " " + (right.tail or "")
    left = code  # the outermost inline element `code` starts
    while (
        left.getprevious() is None
        and not (left.getparent().text or "")
        and _wraps(left.getparent())
    ):
        left = left.getparent()
    before, parent = left.getprevious(), left.getparent()
    ends = (before.tail or "".join(before.itertext())) if before is not None else parent.text or ""
    if ends[-1:].isalnum() and not said[0].isspace():
        if before is None:
            parent.text = ends + " "
        else:
            before.tail = (before.tail or "") + " "


def _wraps(node: etree._Element | None) -> bool:
    return node is not None and node.tag in _INLINE_HTML


def _unlink_scripts(html: etree._Element) -> None:
    """A script link keeps its text, not its href (links.executable), in trafilatura's HTML."""
    for anchor in html.iter("a"):
        if links.executable(anchor.get("href") or ""):
            del anchor.attrib["href"]


def streamed(document: str) -> bool:
    """Whether the page streams parts of itself into place with React's script (below)."""
    calls = ("$RC(", "$RR(", "$RS(")
    return '<div hidden id="S:' in document and any(call in document for call in calls)


def assemble_streamed(tree: LexborHTMLParser) -> None:
    """Put each part a React page streams (server rendering with Suspense: React 18+, Next.js's
    app router) where its script puts it. The page's HTML first has a placeholder ("Loading...")
    after `<template id="B:n">`, later a `<div hidden id="S:n">` with the content, and React's
    $RC / $RR move it in place of the placeholder ($RS: in place of `<template id="P:n">`). Read
    as it comes, the content is hidden and the placeholder shown: a real product page (Wayfair)
    read as "Skip to Main Content".

    Parts go in place last first: a part's slot may be in a part streamed before it, and lexbor
    moves a node as a copy, so that part is still where the slot was found. Bounded: at most
    MAX_STREAMED_PARTS parts, templates and parts found in one pass each."""
    templates = {node.attributes.get("id"): node for node in tree.css('template[id*=":"]')}
    parts = tree.css('div[hidden][id^="S:"]')[:MAX_STREAMED_PARTS]
    for part in reversed(parts):
        number = (part.attributes.get("id") or "")[2:]
        # $RS: a segment of a part goes where its <template id="P:n"> is, which it replaces.
        kind, slot = "P", templates.get(f"P:{number}")
        if slot is None:  # $RC: a boundary's content replaces its placeholder
            kind, slot = "B", templates.get(f"B:{number}")
        if slot is None or not _attached(part) or not _attached(slot):
            continue  # no slot, or one in what a part placed before took out (not React's)
        if kind == "B":
            slot = _placeholder_end(slot, part)
            if slot is None:
                continue
        child = part.first_child
        while child is not None:
            following = child.next
            slot.insert_before(child)
            child = following
        part.decompose()
        if kind == "P":
            slot.decompose()


def _attached(node: LexborNode) -> bool:
    """Whether `node` is still in the document (not in a subtree taken out of it)."""
    while node.parent is not None:
        node = node.parent
    return node.tag == "-document"


def _placeholder_end(boundary: LexborNode, part: LexborNode) -> LexborNode | None:
    """The `<!--/$-->` closing `boundary`'s Suspense placeholder, with the placeholder (the nodes
    between them) removed; None, and nothing removed, if the boundary is not closed or `part`
    is in its placeholder."""
    between: list[LexborNode] = []
    depth, node = 0, boundary.next
    while node is not None:
        if node.is_comment_node:
            mark = (node.comment_content or "").strip()
            if mark == "/$" and depth == 0:
                break
            depth += -1 if mark == "/$" else 1 if mark in ("$", "$?", "$!") else 0
        between.append(node)
        node = node.next
    if node is None:
        return None
    holders, ancestor = set(), part.parent
    holders.add(part.mem_id)
    while ancestor is not None:
        holders.add(ancestor.mem_id)
        ancestor = ancestor.parent
    if any(placeholder.mem_id in holders for placeholder in between):
        return None
    for placeholder in between:
        placeholder.decompose()
    return node


def drop_chrome(tree: LexborHTMLParser) -> None:
    """Remove what HTML marks as navigation, landmarks, dialogs, controls, hidden, pixels."""
    for node in tree.css(_CHROME):
        node.decompose()


def region_of(tree: LexborHTMLParser) -> LexborNode | None:
    """The page's region (see above), from a `tree` without chrome; headers and footers outside
    an article or a main are removed in place. (Before trafilatura they cost 0.004 F1: it reads
    them to place the article.)"""
    mains, articles = _outermost(tree.css("main, [role=main]")), tree.css("article")
    region = mains[0] if len(mains) == 1 else articles[0] if len(articles) == 1 else tree.body
    body = tree.body
    # A tiny <main> next to a long body is a layout wrapper, not the content (the body's text
    # is read only for a region under 500 characters).
    # (mem_id: lexbor's == and != compare two nodes' serialized HTML, the whole page here.)
    if region is not None and body is not None and region.mem_id != body.mem_id:
        shown = 5 * len(region.text())
        if shown < 2500 and shown < len(body.text()):
            region = body
    inside_content = _Within(_content_block)  # an article's or main's own header/footer
    chrome = [node for node in tree.css("header, footer") if not inside_content(node.parent)]
    for node in _outermost(chrome):
        node.decompose()
    return region


def _outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """Each node once (lexbor answers a selector list once per selector a node matches: a
    `<main role="main">` came back twice, so the page's one main was taken for two and the
    region fell back to the body), and none inside another of them."""
    distinct = {node.mem_id: node for node in nodes}
    within = _Within(lambda node: node.mem_id in distinct)
    return [node for node in distinct.values() if not within(node.parent)]


class _Within:
    """`within(node)`: whether `node` or one of its ancestors is `wanted`; each ancestor's answer
    is remembered, so asking for every node of a page is linear, however deep it nests."""

    def __init__(self, wanted: Callable[[LexborNode], bool]) -> None:
        self.wanted, self.known = wanted, dict[int, bool]()

    def __call__(self, node: LexborNode | None) -> bool:
        path, answer = [], False
        while node is not None:
            if (known := self.known.get(node.mem_id)) is not None:
                answer = known
                break
            path.append(node.mem_id)
            if self.wanted(node):
                answer = True
                break
            node = node.parent
        for mem_id in path:
            self.known[mem_id] = answer
        return answer


def _content_block(node: LexborNode) -> bool:
    return node.tag in ("article", "main") or node.attributes.get("role") == "main"


def _words(text: str) -> int:
    """Whitespace-separated words: 4.7x cheaper than counting runs of word characters (a
    regular expression: 1 ms a page of bench/corpus.py); on tests/corpus's 376 pages one page
    reads differently, with the same score in bench/kinds.py (2026-12-06)."""
    return len(text.split())


def _text(node: LexborNode | None) -> str:
    return node.text(separator="") if node is not None else ""


def _html(node: LexborNode | None) -> str:
    if node is None:
        return ""
    for anchor in node.css("a[href]"):  # a script link: its text stays (links.executable)
        if links.executable(anchor.attributes.get("href") or ""):
            del anchor.attrs["href"]
    return node.html or ""
