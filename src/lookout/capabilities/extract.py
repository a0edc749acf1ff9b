"""From a fetched body to what a reader wants: title, main content as markdown and text, links.

CPU-bound and synchronous: web.scrape runs it in a reader process (readers.py). lexbor
(selectolax) parses and reads the metadata and links, `content` picks the page's own content
(trafilatura, or the page's region: see its docstring for what was measured), html-to-markdown
(Rust) converts it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import unicodedata
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from lookout import errors
from lookout.capabilities import charsets, content, links, metadata, readers, structured

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser

MAX_LINKS = 1000
# An image with no alt text, a link with nothing to click (with or without a title), a list item
# with nothing in it (an icon's <li>) tells a reader nothing; an image with no source keeps its
# alt text (html-to-markdown writes `![alt](<>)`). Seen on real product, listing and event pages
# (Murrough-Foley's web-content-extraction-benchmark: 54 `![...](<>)` on one calendar, 140 bare
# `-` items on one category page).
# Every run of characters stops at the next bracket, parenthesis or line end: each match is
# short, so a page of "[](" or "![" repeated is cleaned in linear time (the first patterns ran to
# the end of the text from every bracket: 23 s for 58 KB of "[](").
_TITLE = r'(?:[ \t]+"[^"\n]*")?'
_TARGET = r"(?:<[^<>\n]*>|[^()\[\]\s]*)"
_EMPTY_IMAGE = re.compile(r"!\[\]\(" + _TARGET + _TITLE + r"\)")
_SOURCELESS_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\(<>" + _TITLE + r"\)")
_EMPTY_LINK = re.compile(r"\[[ \t]*\]\(" + _TARGET + _TITLE + r"\)")
_EMPTY_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+[-*+])?[ \t]*")
_EMPTY_ITEM_LINE = re.compile(f"^{_EMPTY_ITEM.pattern}$", re.MULTILINE)
# What is left where an empty image, link or item stood alone: one blank line says as much as
# several (outside a code block, where _tidy leaves them).
# A line of spaces or non-breaking spaces (a WordPress `<p>&nbsp;</p>`) is blank to a reader.
_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n){2,}")
_BLANK_START = re.compile(r"\A(?:[^\S\n]*\n){2,}")
# A code fence opens with three or more backticks or tildes (indented in a list item) and is
# closed by a line of the same character, at least as many.
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
# Plain text is what a reader reads: an image's alt text stays in the markdown only.
_IMAGE = re.compile(r"<img\b[^>]*>", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Extracted:
    title: str | None
    description: str | None
    metadata: dict[str, str | None]
    markdown: str | None
    text: str | None
    html: str | None
    links: list[str]
    content_hash: str
    data: dict[str, Any] | None = None  # the product facts of structured data ("data" format)


def extract(
    body: bytes,
    *,
    url: str,
    content_type: str = "text/html",
    charset: str | None = None,
    formats: Collection[str] = ("markdown",),
    only_main_content: bool = True,
    max_chars: int = 100_000,
) -> Extracted:
    """Read a page. `formats` picks which of markdown, text, links, html are produced.

    Raises content.TooComplex for a page nested too deeply to read within a CPU budget."""
    document = charsets.decode(body, charset)
    if content_type == "text/plain":
        return _plain(document, formats, max_chars)
    content.check_nesting(document)
    data = structured.read(document, url) if "data" in formats else None
    tree = _tree(document)
    base = links.base_url(tree, url)
    found = links.page_links(tree, base, MAX_LINKS) if "links" in formats else []
    about, kinds, names = metadata.read_with_kinds(tree, base)
    unscripted = _noscript_words(tree) if "<noscript" in document else 0
    main, words = _content(tree, document, kinds, names, only_main_content)
    if unscripted and unscripted > len(words.split()):  # none: nothing to count
        # More text for readers without JavaScript than the page shows us: its content is
        # served there (Flarum renders a thread in <noscript>; read without it, a real forum
        # page was "Loading..."). Read with it (its elements in their place), if that reads more.
        again = _tree(document)
        again.unwrap_tags(["noscript"])
        read = _content(again, document, kinds, names, only_main_content)
        main, words = read if len(read[1].split()) > len(words.split()) else (main, words)
    text = _plain_text(main, base) if "text" in formats else None
    return Extracted(
        title=about["title"],
        description=about["description"],
        metadata=about,
        markdown=_markdown(main, base)[:max_chars] if "markdown" in formats else None,
        text=text[:max_chars] if text is not None else None,
        html=_absolute_html(main, base, max_chars) if "html" in formats else None,
        links=[url for url, _ in found],
        content_hash=content_hash(words),
        data=data,
    )


def _content(
    tree: LexborHTMLParser,
    document: str,
    kinds: frozenset[str],
    names: tuple[str, ...],
    only_main_content: bool,
) -> tuple[str, str]:
    """(HTML, text) of the page's content (content.main_html), or of its whole body."""
    _drop(tree, content.JUNK)
    if not only_main_content:
        return content.page_html(tree)
    tags = document.count("<") - document.count("</")
    main, words, _ = content.main_html(tree, kinds, tags=tags, names=names)
    return main, words


def _tree(document: str) -> LexborHTMLParser:
    """lexbor's tree of `document`, its React-streamed parts in place (assemble_streamed)."""
    tree = _parse(document)
    if content.streamed(document):
        content.assemble_streamed(tree)
    return tree


def _noscript_words(tree: LexborHTMLParser) -> int:
    return sum(len(node.text(separator=" ").split()) for node in tree.css("noscript"))


def not_read(url: str, exc: Exception) -> errors.FetchFailed:
    """What a call says of a page fetched from `url` whose reading (extract, outline: in a reader
    process or on the loop) raised `exc`."""
    if isinstance(exc, content.TooComplex):
        budget, verdict = "a CPU budget", "is built to exceed it"
    elif isinstance(exc, readers.ReadTimeout):
        budget, verdict = "a time budget", "exceeded it"
    else:
        return errors.FetchFailed(f"{url} was fetched but could not be read.")
    return errors.FetchFailed(
        f"{url} was fetched but not read: {exc}. Lookout reads pages within {budget}; "
        f"this one {verdict}."
    )


def content_hash(text: str) -> str:
    """sha256 of the text with Unicode and whitespace normalized: markup changes do not count."""
    normalized = " ".join(unicodedata.normalize("NFKC", text).split())
    return "sha256:" + hashlib.sha256(normalized.encode()).hexdigest()


def outline(
    body: bytes, *, url: str, charset: str | None = None
) -> tuple[str | None, str, list[tuple[str, str]]]:
    """(title, snippet, [(link, anchor text)]) of a page, for site discovery."""
    document = charsets.decode(body, charset)
    content.check_nesting(document)
    tree = _parse(document)
    found = links.page_links(tree, links.base_url(tree, url), MAX_LINKS)
    metas = metadata.meta_values(tree)
    title, description = metadata.title(tree, metas), metadata.description(metas)
    if description is None:
        _drop(tree, content.JUNK)
        content.drop_chrome(tree)
        region = content.region_of(tree)
        text = region.text(separator=" ") if region is not None else ""
        description = metadata.clip(text, metadata.MAX_DESCRIPTION)
    return title, description or "", found


def _plain(document: str, formats: Collection[str], max_chars: int) -> Extracted:
    text = document[:max_chars]
    return Extracted(
        title=None,
        description=None,
        metadata=metadata.empty(),
        markdown=text if "markdown" in formats else None,
        text=text if "text" in formats else None,
        html=None,
        links=[],
        content_hash=content_hash(document),
    )


def _drop(tree: LexborHTMLParser, selector: str) -> None:
    for node in tree.css(selector):
        node.decompose()


def _plain_text(html: str, base: str) -> str:
    """`html` as plain text: without its images (the markdown keeps their alt text), and without
    the list items that held nothing else (a gallery's: a line of "-" each, as html-to-markdown
    writes an empty item; the markdown drops them too, _tidy)."""
    html = _IMAGE.sub("", html)
    if "<li" in html:
        tree = _parse(html)
        worded = _worded(tree)
        emptied = [item for item in tree.css("li") if item.mem_id not in worded]
        if emptied:
            for item in reversed(emptied):  # the innermost first
                item.decompose()
            html = tree.html or ""
    return _convert(html, base, "plain")


def _worded(tree: LexborHTMLParser) -> set[int]:
    """mem_id of every element with some text in it. Linear: each text node's ancestors are
    marked up to the first one marked already (an item's own text(), asked of every item, read a
    list nested N deep N times over)."""
    marked: set[int] = set()
    body = tree.body
    for node in body.traverse(include_text=True) if body is not None else ():
        if node.tag != "-text" or not (node.text_content or "").strip():
            continue
        parent = node.parent
        while parent is not None and parent.mem_id not in marked:
            marked.add(parent.mem_id)
            parent = parent.parent
    return marked


def _markdown(html: str, base: str) -> str:
    return _tidy(_convert(html, base, "markdown")).strip()


def _tidy(markdown: str) -> str:
    """`markdown` without empty images, empty links and empty list items, a source-less image
    as its alt text, one blank line where there were more; code blocks left as they are."""
    if "```" not in markdown and "~~~" not in markdown:  # no code block: it is all prose
        return "\n".join(_tidy_prose(markdown.split("\n")))
    lines: list[str] = []
    prose: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        marker = _FENCE.match(line)
        if fence:
            lines.append(line)
            if marker is not None and _closes(marker, line, fence):
                fence = ""
        elif marker is not None:
            lines += _tidy_prose(prose)
            prose, fence = [], marker.group(1)
            lines.append(line)
        else:
            prose.append(line)
    return "\n".join(lines + _tidy_prose(prose))


def _closes(marker: re.Match[str], line: str, fence: str) -> bool:
    """Whether `line` (a fence `marker`) closes a code block opened by `fence`."""
    found = marker.group(1)
    return found[0] == fence[0] and len(found) >= len(fence) and not line[marker.end() :].strip()


def _tidy_prose(lines: list[str]) -> list[str]:
    if not lines:
        return []
    text = "\n".join(lines)
    if "](" in text:
        text = _SOURCELESS_IMAGE.sub(r"\1", _EMPTY_IMAGE.sub("", text))
        text = _EMPTY_LINK.sub("", text)
    if _EMPTY_ITEM_LINE.search(text) is not None:  # most pages have none: no line by line
        kept = [line for line in text.split("\n") if not _EMPTY_ITEM.fullmatch(line)]
        if not kept:
            return []
        text = "\n".join(kept)
    return _one_blank_line(text).split("\n")


def _one_blank_line(text: str) -> str:
    """`text` (a run of prose lines between code blocks) with one blank line where it had more,
    at its start and end too (a code block's fence line is on either side)."""
    if not text.strip():
        return ""
    text = _BLANK_START.sub("\n", _BLANK_LINES.sub("\n\n", text))
    kept = text.rstrip()  # a pattern anchored at the end is tried from every newline: 0.5 ms
    return kept + "\n" if text.count("\n", len(kept)) >= 2 else text


def _convert(html: str, base: str, output: str) -> str:
    # Loaded at the first page converted (in a reader process, or where a page is read inline),
    # not in every web and worker process (~8 MiB RSS; ~30 ms the first time).
    import html_to_markdown

    options = html_to_markdown.ConversionOptions(
        **_enum_defaults(),
        output_format=getattr(html_to_markdown.OutputFormat, output.upper()),
        base_url=base,
        extract_metadata=False,
        autolinks=False,
        compact_tables=True,  # padding costs a model tokens and tells it nothing...
        # ...but tier1 pads larger tables anyway. Measured on bench/corpus.py it converts in
        # 0.74 ms a page against 1.73 ms for "auto", otherwise with the same output. tier1
        # writes markdown whatever output_format says (html-to-markdown 3.21): plain text
        # takes the default tiers.
        tier_strategy=html_to_markdown.TierStrategy.TIER1
        if output == "markdown"
        else html_to_markdown.TierStrategy.AUTO,
        # A data: image can be megabytes of base64; its alt text is what a reader wants.
        inline_data_media=html_to_markdown.InlineDataMedia.ALT_TEXT_ONLY,
        preprocessing=html_to_markdown.PreprocessingOptions(enabled=False),
    )
    converted = html_to_markdown.convert(html, options).content or ""
    return converted.strip()


# Options whose default html-to-markdown gives as a string, and their enum: `convert` coerces a
# string to its enum at every call (up to seven lookups each; seen in a cProfile of bench/door.py's
# server), an enum member passes at once: 42 -> 18 us a call on a small page. The members are the
# library's own defaults, so the output is the same (tests/unit/test_extract_options.py; and
# byte-identical markdown and text on the 191 pages of tests/corpus, both only_main_content).
_ENUM_OPTIONS = {
    "heading_style": "HeadingStyle", "list_indent_type": "ListIndentType",
    "highlight_style": "HighlightStyle", "whitespace_mode": "WhitespaceMode",
    "newline_style": "NewlineStyle", "code_block_style": "CodeBlockStyle",
    "hidden_content": "HiddenContent", "url_escape_style": "UrlEscapeStyle",
    "link_style": "LinkStyle",
}  # fmt: skip


@functools.cache
def _enum_defaults() -> dict[str, Any]:
    import html_to_markdown

    defaults = html_to_markdown.ConversionOptions()
    return {
        name: getattr(getattr(html_to_markdown, enum), str(getattr(defaults, name)).upper())
        for name, enum in _ENUM_OPTIONS.items()
    }


def _absolute_html(html: str, base: str, max_chars: int) -> str:
    tree = _parse(html)
    links.absolutize(tree, base)
    body = tree.body
    return (body.inner_html or "")[:max_chars] if body is not None else ""


def _parse(document: str) -> LexborHTMLParser:
    """lexbor's tree of `document`. selectolax loads with the first page read (in a web or worker
    process only for pages read in process, under readers.INLINE_BYTES)."""
    from selectolax.lexbor import LexborHTMLParser

    return LexborHTMLParser(document)
