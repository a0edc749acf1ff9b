"""How deep a page nests its elements, read from its tags before any parser sees it.

lexbor parses a page nested N deep in O(N^2) (content.py refuses one nested past MAX_DEPTH),
so this reads the tags as an HTML tokenizer does, as far as nesting goes, in one pass of
regular expressions that each consume what they match (linear in the page, whatever it holds):
- a quoted attribute value is part of its tag (`<div title="a>b</div>">` closes nothing);
- comments, `<!...>` and `<?...>` hold no tags; nor do the contents of script, style, textarea,
  title, xmp, iframe, noembed, noframes (raw text) and everything after <plaintext>;
- a tag or a comment left open runs to the end of the page (a browser drops it);
- `<div/>` opens a div (HTML ignores the slash); in SVG and MathML a slash closes its element,
  their elements nest (a `<td>` there is no table cell), and an HTML element such as <div> or
  <p> inside them ends them as a parser does (their integration points, <foreignObject> and
  the like, hold HTML);
- elements a parser closes itself when a page leaves them open (p, li, td, tr, ...) and void
  ones (br, img, ...) do not nest, and are skipped inside the expression, not one by one;
- an end tag closes up to its open element, unless an element of HTML's "special" kind (<div>,
  <table>, ...) is open inside it: then a formatting element (<b>, <a>, ...) alone is taken out
  (the adoption agency, as far as depth goes) and any other is left open (`<x><div></x>`); a
  stray one closes nothing. Names compare in ASCII lowercase, as HTML's.
What it does not model (the rest of a parser's tree building: foster parenting out of tables,
where `<x><table></x>` repeated reads deeper here than a parser builds it; formatting elements a
parser opens again; a script's `<!--<script>` escape): a page built on those to nest deep passes
this check and is stopped by the readers' time budget instead (readers.py: a reader that reads
a page past it is killed and the page answered with an error).

Measured (2026-12-06, the 5 pages of bench/corpus.py over 5,000 tags, 320-459 KB of tables;
only such pages are read here): 9.4-14.1 ms a page with the previous pattern
(`<(/?name)[^>]*?(/?)>`, every tag a Python step, and quadratic: 80 KB of "<a" took 33 s),
4.1-6.4 ms with these (alternated in the same runs). Skipping the table's tags in the
expression, a bare `<td>` first, took it from 9.4 to 4.4 ms on the largest.
On tests/corpus's 376 real pages the depth read here is at most 2 above lexbor's (the previous
pattern: up to 279 above, more than 5 above on 17 pages: tags in scripts, comments and
attributes) and at most 18 below it, as before (a table's implied rows and cells, formatting
elements a parser opens again: not counted here).
"""

from __future__ import annotations

import bisect
import collections
import functools
import re

# A tag's attributes: names (which may start with "=" or a quote), each with its value, which
# is quoted (to its closing quote, or the end of the page) or runs to a space or ">". A slash
# just before ">" is left for the self-closing flag.
_ATTRIBUTES = (
    rb"(?:[\t\n\f\r ]++|/(?!>)|[^\t\n\f\r />][^\t\n\f\r />=]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?)*+"
)
_END = rb"(?:>|\Z)"
# Elements that do not nest: a parser closes them when a page leaves them open, or they are
# void. Outside SVG and MathML only.
_FLAT = frozenset(
    b"p li dt dd option optgroup tr td th thead tbody tfoot colgroup rb rt rp area base br col "
    b"embed hr img input link meta source track wbr".split()
)
_BOGUS = rb"<(?:!(?!\[cdata\[)|\?|/(?![a-z]))[^>]*+" + _END  # a declaration, "<?", "</3"
_SKIPPED = (
    rb"[^<]++"  # text
    rb"|<!--(?s:-?>|.*?(?:--!?>|\Z))"  # a comment (`<!-->` ends at once)
    rb"|" + _BOGUS + rb"|<(?![a-z!?/])"  # a "<" that opens nothing is text
)
_NAME_ENDS = rb"(?=[\t\n\f\r />]|\Z)"
# First, and with a fast path for a bare `<td>`: on a page of tables most tags are these.
_FLAT_NAME = rb"</?(?:" + b"|".join(sorted(_FLAT)) + rb")"
_FLAT_TAG = _FLAT_NAME + rb"(?:>|" + _NAME_ENDS + _ATTRIBUTES + b"/?" + _END + b")"
_TAG = rb"<(/?)([a-z][^\t\n\f\r />]*+)(" + _ATTRIBUTES + rb")(/?)" + _END
_TOKEN = rb"(?:" + _TAG + rb"|(<!\[cdata\[)|\Z)"
# What to skip, then the next tag that matters (or a CDATA section, or the end of the page).
_HTML_NEXT = re.compile(rb"(?:" + _FLAT_TAG + rb"|" + _SKIPPED + rb")*+" + _TOKEN)
_FOREIGN_NEXT = re.compile(rb"(?:" + _SKIPPED + rb")*+" + _TOKEN)
_RAW_TEXT = frozenset(b"script style textarea title xmp iframe noembed noframes plaintext".split())
# In SVG or MathML, these start tags are HTML: a parser closes the SVG / MathML elements open.
_BREAKOUT = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img "
    b"li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul "
    b"var".split()
)
_FONT_BREAKOUT = re.compile(rb"(?:^|[\t\n\f\r /])(?:color|face|size)(?![^\t\n\f\r />=])")
# Inside SVG or MathML, these hold HTML.
_INTEGRATION = frozenset(b"foreignobject desc title mi mo mn ms mtext".split())
_HTML_ANNOTATION = re.compile(
    rb"(?:^|[\t\n\f\r /])encoding[\t\n\f\r ]*=[\t\n\f\r ]*[\"']?"
    rb"(?:text/html|application/xhtml\+xml)"
)
_CDATA_END = re.compile(rb"\]\]>")
# What an end tag may close: an element in HTML's "special" category stops one of another name
# (`<x><div></x>` leaves both open), and a formatting element's (`<b><div></b>`) takes the <b>
# out and leaves the <div> open (the adoption agency, as far as depth goes).
_SPECIAL = frozenset(
    b"address applet area article aside base basefont bgsound blockquote body br button caption "
    b"center col colgroup dd details dir div dl dt embed fieldset figcaption figure footer form "
    b"frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img input keygen li link "
    b"listing main marquee menu meta nav noembed noframes noscript object ol p param plaintext pre "
    b"script search section select source style summary table tbody td template textarea tfoot th "
    b"thead title tr track ul wbr xmp mi mo mn ms mtext annotation-xml foreignobject desc".split()
)
_FORMATTING = frozenset(b"a b big code em font i nobr s small strike strong tt u".split())


def deeper_than(document: str, limit: int) -> bool:
    """Whether `document` nests elements more than `limit` deep, as a parser would (see above)."""
    if document.count("<") <= limit:
        return False  # too few tags to nest that deep
    page = document.encode("utf-8", "replace").lower()  # bytes: ASCII lowercase, as HTML's
    elements = _Open()
    foreign, position = False, 0
    while True:
        token = (_FOREIGN_NEXT if foreign else _HTML_NEXT).match(page, position)
        assert token is not None  # the expression always matches: at worst, the end of the page
        position = token.end()
        closing, name, attributes, self_closing, cdata = token.groups()
        if cdata is not None:  # in SVG and MathML a CDATA section ends at "]]>" (or the end
            if foreign:  # of the page); elsewhere it is a bogus comment, to the next ">"
                end = _CDATA_END.search(page, position)
                position = end.end() if end else len(page)
            else:
                position = page.find(b">", position) + 1 or len(page)
            continue
        if name is None:
            return False
        if closing:
            elements.close(name)
            foreign = elements.foreign()
            continue
        if foreign and _breaks_out(name, attributes):
            elements.leave_foreign()  # the SVG / MathML elements open end here
            foreign = False
            if name in _FLAT:
                continue
        elif foreign and self_closing:
            continue
        holds_foreign = name in (b"svg", b"math") or (foreign and not _holds_html(name, attributes))
        if elements.push(name, holds_foreign) > limit:
            return True
        if not foreign and name in _RAW_TEXT:  # its text holds no tags: on to its end tag
            end = None if name == b"plaintext" else _raw_end(name).search(page, position)
            position = end.start() if end else len(page)
        foreign = holds_foreign


class _Open:
    """The elements open, as a parser's stack of them; each tag costs O(1) (amortized) or, for
    an element taken out from under others, a search and a move of at most the stack."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, bytes, bool]] = []  # (order, name, holds SVG / MathML)
        self._named: dict[bytes, list[int]] = collections.defaultdict(list)  # orders, by name
        self._special: list[int] = []  # orders of the special elements open
        self._made = 0

    def push(self, name: bytes, holds_foreign: bool) -> int:
        """Open `name`; how many elements are open."""
        self._made += 1
        self._stack.append((self._made, name, holds_foreign))
        self._named[name].append(self._made)
        if name in _SPECIAL:
            self._special.append(self._made)
        return len(self._stack)

    def close(self, name: bytes) -> None:
        """An end tag: it closes up to its element, unless a special element is open inside
        it (then a formatting element alone is taken out, another is left open); a stray one
        closes nothing."""
        orders = self._named.get(name)
        if not orders:
            return
        order = orders[-1]
        if self._special and self._special[-1] > order and name not in _SPECIAL:
            if name in _FORMATTING:
                del self._stack[bisect.bisect_left(self._stack, (order,))]
                orders.pop()
            return
        while self._pop() != order:
            pass

    def foreign(self) -> bool:
        """Whether the innermost element open holds SVG / MathML."""
        return bool(self._stack) and self._stack[-1][2]

    def leave_foreign(self) -> None:
        while self.foreign():
            self._pop()

    def _pop(self) -> int:
        order, name, _ = self._stack.pop()
        self._named[name].pop()
        if self._special and self._special[-1] == order:
            self._special.pop()
        return order


def _breaks_out(name: bytes, attributes: bytes) -> bool:
    return name in _BREAKOUT or (name == b"font" and _FONT_BREAKOUT.search(attributes) is not None)


def _holds_html(name: bytes, attributes: bytes) -> bool:
    """Whether an element inside SVG or MathML holds HTML (an integration point)."""
    if name == b"annotation-xml":
        return _HTML_ANNOTATION.search(attributes) is not None
    return name in _INTEGRATION


@functools.cache
def _raw_end(name: bytes) -> re.Pattern[bytes]:
    return re.compile(rb"</" + re.escape(name) + rb"(?=[\t\n\f\r />])")
