"""From a fetched body to what a reader wants: title, main content as markdown and text, links.

CPU-bound and synchronous: callers run it with `asyncio.to_thread`. lexbor (selectolax) parses and
finds the main content; html-to-markdown (Rust) converts it. Both release the GIL.
"""

from __future__ import annotations

import dataclasses
import hashlib
import unicodedata
from collections.abc import Collection
from typing import Any

import html_to_markdown
from selectolax.lexbor import LexborHTMLParser, LexborNode

from lookout.capabilities import charsets, links, structured

MAX_TITLE = 1000
MAX_DESCRIPTION = 500
MAX_LINKS = 1000
# Never content, whatever the page: dropped before anything else is measured.
_JUNK = "script, style, noscript, template, svg, iframe, object, embed, canvas, link, meta, head"
_BOILERPLATE_WORDS = (
    "cookie",
    "consent",
    "sidebar",
    "breadcrumb",
    "newsletter",
    "advert",
    "social",
    "share",
    "related",
    "popup",
    "modal",
    "subscribe",
    "skip-link",
    "site-header",
    "site-footer",
    "menu",
)
_BOILERPLATE = ", ".join(
    [
        "nav, aside, footer, form, button, dialog, [hidden], [aria-hidden=true]",
        "[role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=search]",
        *(f'[class*="{word}"], [id*="{word}"]' for word in _BOILERPLATE_WORDS),
    ]
)
_MAIN_SELECTORS = ("#content", "#main", ".post-content", ".entry-content", ".article-body")


@dataclasses.dataclass(frozen=True)
class Extracted:
    title: str | None
    description: str | None
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
    """Read a page. `formats` picks which of markdown, text, links, html are produced."""
    document = charsets.decode(body, charset)
    if content_type == "text/plain":
        return _plain(document, formats, max_chars)
    data = structured.read(document, url) if "data" in formats else None
    tree = LexborHTMLParser(document)
    base = links.base_url(tree, url)
    found = links.page_links(tree, base, MAX_LINKS) if "links" in formats else []
    title, description = _title(tree), _description(tree)
    _drop(tree.root, _JUNK)
    whole = None if only_main_content else _html(tree.body)
    main = _main(tree)
    _drop_boilerplate(main)
    content = _html(main) if whole is None else whole
    return Extracted(
        title=title,
        description=description,
        markdown=_convert(content, base, "markdown", max_chars) if "markdown" in formats else None,
        text=_convert(content, base, "plain", max_chars) if "text" in formats else None,
        html=_absolute_html(content, base, max_chars) if "html" in formats else None,
        links=[url for url, _ in found],
        content_hash=content_hash(main.text(separator="") if main else ""),
        data=data,
    )


def content_hash(text: str) -> str:
    """sha256 of the text with Unicode and whitespace normalized: markup changes do not count."""
    normalized = " ".join(unicodedata.normalize("NFKC", text).split())
    return "sha256:" + hashlib.sha256(normalized.encode()).hexdigest()


def outline(
    body: bytes, *, url: str, charset: str | None = None
) -> tuple[str | None, str, list[tuple[str, str]]]:
    """(title, snippet, [(link, anchor text)]) of a page, for site discovery."""
    tree = LexborHTMLParser(charsets.decode(body, charset))
    found = links.page_links(tree, links.base_url(tree, url), MAX_LINKS)
    title, description = _title(tree), _description(tree)
    if description is None:
        _drop(tree.root, _JUNK)
        main = _main(tree)
        _drop_boilerplate(main)
        description = _clip(main.text(separator=" ") if main else "", MAX_DESCRIPTION)
    return title, description or "", found


def _plain(document: str, formats: Collection[str], max_chars: int) -> Extracted:
    text = document[:max_chars]
    return Extracted(
        title=None,
        description=None,
        markdown=text if "markdown" in formats else None,
        text=text if "text" in formats else None,
        html=None,
        links=[],
        content_hash=content_hash(document),
    )


def _title(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first("title")
    og = tree.css_first('meta[property="og:title"]')
    heading = tree.css_first("h1")
    for candidate in (
        node.text() if node else None,
        og.attributes.get("content") if og else None,
        heading.text() if heading else None,
    ):
        if candidate and candidate.strip():
            return _clip(candidate, MAX_TITLE)
    return None


def _description(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first('meta[name="description"]') or tree.css_first(
        'meta[property="og:description"]'
    )
    content = node.attributes.get("content") if node else None
    return _clip(content, MAX_DESCRIPTION) if content and content.strip() else None


def _clip(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def _main(tree: LexborHTMLParser) -> LexborNode | None:
    """The element holding the page's own content; the body when no better one stands out."""
    body = tree.body
    if body is None:
        return None
    mains = tree.css("main, [role=main]")
    articles = tree.css("article")
    if len(mains) == 1:
        candidate = mains[0]
    elif len(articles) == 1:
        candidate = articles[0]
    else:
        candidate = next(filter(None, map(tree.css_first, _MAIN_SELECTORS)), body)
    # A tiny <main> next to a long body is a layout wrapper, not the content.
    if candidate is not body and len(candidate.text()) * 5 < min(len(body.text()), 2500):
        return body
    return candidate


def _drop_boilerplate(root: LexborNode | None) -> None:
    if root is None:
        return
    _drop(root, _BOILERPLATE)
    for header in root.css("header"):
        if not _inside(header, "article"):
            header.decompose()


def _drop(root: LexborNode | None, selector: str) -> None:
    if root is not None:
        for node in root.css(selector):
            node.decompose()


def _inside(node: LexborNode, tag: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag == tag:
            return True
        parent = parent.parent
    return False


def _html(node: LexborNode | None) -> str:
    return (node.html or "") if node is not None else ""


def _convert(content: str, base: str, output: str, max_chars: int) -> str:
    options = html_to_markdown.ConversionOptions(
        output_format=output,
        base_url=base,
        extract_metadata=False,
        autolinks=False,
        compact_tables=True,  # padding costs a model tokens and tells it nothing...
        # ...but tier1 pads larger tables anyway. Measured on bench/corpus.py it converts in
        # 0.74 ms a page against 1.73 ms for "auto", otherwise with the same output.
        tier_strategy="tier1",
        # A data: image can be megabytes of base64; its alt text is what a reader wants.
        inline_data_media=html_to_markdown.InlineDataMedia.ALT_TEXT_ONLY,
        preprocessing=html_to_markdown.PreprocessingOptions(enabled=False),
    )
    converted = html_to_markdown.convert(content, options).content or ""
    return converted.strip()[:max_chars]


def _absolute_html(content: str, base: str, max_chars: int) -> str:
    tree = LexborHTMLParser(content)
    links.absolutize(tree, base)
    body = tree.body
    return (body.inner_html or "")[:max_chars] if body is not None else ""
