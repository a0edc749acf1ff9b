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
- an end tag closes up to its open element; a stray one closes nothing. Names compare in ASCII
  lowercase, as HTML's.
What it does not model (a parser's tree building: an end tag that a special element such as
<div> between stops, the adoption agency's reparenting of <b>/<i>, foster parenting out of
tables, a script's `<!--<script>` escape): a page built on those to nest deep passes this check
and is stopped by the readers' time budget instead (readers.py: a reader that reads a page past
it is killed and the page answered with an error).

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
FLAT = frozenset(
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
_FLAT_NAME = rb"</?(?:" + b"|".join(sorted(FLAT)) + rb")"
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


def deeper_than(document: str, limit: int) -> bool:
    """Whether `document` nests elements more than `limit` deep, as a parser would (see above)."""
    if document.count("<") <= limit:
        return False  # too few tags to nest that deep
    page = document.encode("utf-8", "replace").lower()  # bytes: ASCII lowercase, as HTML's
    stack: list[tuple[bytes, bool]] = []  # each open element, and whether it holds SVG/MathML
    opened: collections.Counter[bytes] = collections.Counter()
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
            if opened[name]:
                while (top := stack.pop())[0] != name:
                    opened[top[0]] -= 1
                opened[name] -= 1
                foreign = bool(stack) and stack[-1][1]
            continue
        if foreign and _breaks_out(name, attributes):
            while stack and stack[-1][1]:  # the SVG / MathML elements open end here
                opened[stack.pop()[0]] -= 1
            foreign = False
            if name in FLAT:
                continue
        elif foreign and self_closing:
            continue
        holds_foreign = name in (b"svg", b"math") or (foreign and not _holds_html(name, attributes))
        stack.append((name, holds_foreign))
        opened[name] += 1
        if len(stack) > limit:
            return True
        if not foreign and name in _RAW_TEXT:  # its text holds no tags: on to its end tag
            end = None if name == b"plaintext" else _raw_end(name).search(page, position)
            position = end.start() if end else len(page)
        foreign = holds_foreign


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
