"""Extraction: what a reader gets from a page's bytes."""

from __future__ import annotations

import re

import pytest

from lookout.capabilities import charsets, content, extract, readers

URL = "https://news.example/2024/story.html"

STORY = """<!doctype html><html><head><title> River  levels
 rise again </title><meta name="description" content="Flood watch for the valley."></head>
<body>
<header class="site-header"><a href="/">Home</a>
  <nav><a href="/world">World</a><a href="/sport">Sport</a></nav></header>
<div id="cookie-consent">We use cookies. <button>Accept all</button></div>
<main>
  <article>
    <h1>River levels rise again</h1>
    <p>The river rose <strong>two metres</strong> overnight, see
       <a href="../2023/flood.html#map">last year's flood</a>.</p>
    <h2>What to do</h2>
    <ul><li>Move cars to high ground</li><li>Check the <a href="/alerts">alerts</a></li></ul>
    <table><tr><th>Town</th><th>Level</th></tr><tr><td>Ashford</td><td>4.2 m</td></tr></table>
    <pre><code>level = read_gauge()</code></pre>
    <img src="/img/river.jpg" alt="The river at dawn">
    <img src="data:image/png;base64,{payload}" alt="tiny chart">
  </article>
  <aside class="sidebar">Most read: celebrity gossip</aside>
</main>
<footer>Copyright 2024 News Example Ltd</footer>
<script>window.tracking = "do not include me";</script>
</body></html>"""


def _read(html: str, **options: object) -> extract.Extracted:
    options.setdefault("formats", ("markdown", "text", "links", "html"))
    return extract.extract(html.encode(), url=URL, **options)  # type: ignore[arg-type]


@pytest.fixture
def story() -> extract.Extracted:
    return _read(STORY.replace("{payload}", "A" * 50_000))


def test_title_is_trimmed_to_one_line(story: extract.Extracted) -> None:
    assert story.title == "River levels rise again"


def test_main_content_leaves_out_the_boilerplate(story: extract.Extracted) -> None:
    assert story.markdown is not None and story.text is not None
    for boilerplate in ("World", "cookies", "Most read", "Copyright", "tracking", "Home"):
        assert boilerplate not in story.markdown
        assert boilerplate not in story.text
    assert "two metres" in story.text


def test_markdown_keeps_headings_lists_tables_code_and_absolute_links(
    story: extract.Extracted,
) -> None:
    markdown = story.markdown or ""
    assert "# River levels rise again" in markdown
    assert "## What to do" in markdown
    assert "- Move cars to high ground" in markdown
    assert re.search(r"\| Town +\| Level +\|", markdown)  # columns may be padded
    assert re.search(r"\| Ashford +\| 4\.2 m +\|", markdown)
    assert "level = read_gauge()" in markdown
    assert "[last year's flood](https://news.example/2023/flood.html#map)" in markdown
    assert "![The river at dawn](https://news.example/img/river.jpg)" in markdown


def test_inline_data_images_do_not_flood_the_markdown(story: extract.Extracted) -> None:
    assert "AAAAAAAA" not in (story.markdown or "")
    assert len(story.markdown or "") < 2000


@pytest.mark.parametrize("main", [True, False])
def test_a_script_link_keeps_its_text_but_not_its_url(main: bool) -> None:
    # A markdown or HTML reader could run such a link; a browser reads the scheme with the
    # spaces and controls around it stripped, tabs and newlines removed, in any case.
    hrefs = [
        "javascript:void(0)", " JavaScript:alert(1)", "&#106;ava&#x09;script:alert(2)",
        "java&#10;script:alert(3)", "vbscript:msgbox(4)", "data:text/html;base64,PHNjcmlwdD4=",
    ]  # fmt: skip
    anchors = " ".join(f'<a href="{href}">step {n}</a>' for n, href in enumerate(hrefs))
    page = (
        "<html><body><main><h1>How to reset the router</h1><p>Unplug it for ten seconds, then"
        f" follow {anchors}, or read <a href='/help'>the help page</a> about it first, as"
        " the manual says for every model sold since the spring.</p></main></body></html>"
    )
    read = extract.extract(
        page.encode(), url=URL, formats=("markdown", "text", "html"), only_main_content=main
    )

    assert read.markdown is not None and read.html is not None and read.text is not None
    for n in range(len(hrefs)):
        assert f"step {n}" in read.markdown and f"step {n}" in read.text
    assert "[the help page](https://news.example/help)" in read.markdown
    assert 'href="https://news.example/help"' in read.html
    for shown in (read.markdown.lower(), read.html.lower()):
        for scheme in ("script:", "data:", "alert", "msgbox"):
            assert scheme not in shown, (scheme, shown)


def test_links_are_absolute_distinct_and_in_page_order(story: extract.Extracted) -> None:
    assert story.links == [
        "https://news.example/",
        "https://news.example/world",
        "https://news.example/sport",
        "https://news.example/2023/flood.html",
        "https://news.example/alerts",
    ]


def test_links_honour_base_href_and_skip_non_web_links() -> None:
    page = _read(
        '<html><head><base href="https://cdn.example/docs/"></head><body>'
        '<a href="intro">Intro</a><a href="//other.example/x">Other</a>'
        '<a href="mailto:a@b.example">Mail</a><a href="javascript:void(0)">JS</a>'
        '<a href="#top">Top</a><a href="HTTPS://CDN.Example:443/docs/intro">Again</a></body></html>'
    )
    assert page.links == ["https://cdn.example/docs/intro", "https://other.example/x"]


def test_html_is_the_cleaned_content_with_absolute_urls(story: extract.Extracted) -> None:
    html = story.html or ""
    assert 'href="https://news.example/alerts"' in html
    assert "<script" not in html and "Most read" not in html


def test_only_main_content_off_keeps_the_whole_page_but_never_scripts() -> None:
    page = _read(STORY.replace("{payload}", "A"), only_main_content=False)
    assert "Most read" in (page.markdown or "")
    assert "Copyright" in (page.markdown or "")
    assert "do not include me" not in (page.markdown or "")


def test_formats_not_asked_for_are_not_produced() -> None:
    page = _read(STORY, formats=("markdown",))
    assert page.markdown and page.text is None and page.html is None and page.links == []


def test_max_chars_cuts_each_format() -> None:
    long = "<main>" + "<p>word " * 5000 + "</main>"
    page = _read(long, max_chars=1000)
    assert len(page.markdown or "") == 1000 and len(page.text or "") == 1000


def test_a_page_of_many_articles_keeps_them_all() -> None:
    listing = "<body><nav>Menu</nav>" + "".join(
        f"<article><h2>Story {i}</h2><p>Body of story {i}.</p></article>" for i in range(3)
    )
    markdown = _read(listing + "</body>").markdown or ""
    assert all(f"Story {i}" in markdown for i in range(3))
    assert "Menu" not in markdown


def test_a_tiny_main_beside_a_long_body_is_not_taken_for_the_content() -> None:
    page = "<body><main>Hi</main><div>" + "<p>The real text is here. " * 40 + "</div></body>"
    assert "The real text is here." in (_read(page).markdown or "")


def test_the_hash_ignores_markup_and_boilerplate_changes() -> None:
    restyled = (
        STORY.replace("<p>The river", '<p class="lead" style="color:red">The  river')
        .replace("<h2>", '<div class="wrap"><h2 id="todo">')
        .replace("</h2>", "</h2></div>")
        .replace("Most read: celebrity gossip", "Most read: something else")
        .replace("Sport", "Weather")
        .replace("do not include me", "changed tracker")
    )
    assert _read(restyled).content_hash == _read(STORY).content_hash


def test_the_hash_changes_when_the_text_does() -> None:
    edited = STORY.replace("two metres", "three metres")
    assert _read(edited).content_hash != _read(STORY).content_hash


def test_plain_text_is_passed_through() -> None:
    page = extract.extract(
        b"line one\nline two", url=URL, content_type="text/plain", formats=("markdown", "text")
    )
    assert page.markdown == page.text == "line one\nline two"
    assert page.title is None and page.content_hash.startswith("sha256:")


def test_outline_gives_title_snippet_and_anchor_texts() -> None:
    title, snippet, found = extract.outline(STORY.encode(), url=URL)
    assert title == "River levels rise again"
    assert snippet == "Flood watch for the valley."
    assert ("https://news.example/2023/flood.html", "last year's flood") in found


def test_outline_without_description_uses_the_start_of_the_main_text() -> None:
    _, snippet, _ = extract.outline(
        b"<nav>Menu</nav><main><p>First words here.</p></main>", url=URL
    )
    assert snippet == "First words here."


@pytest.mark.parametrize(
    ("body", "declared", "expected"),
    [
        ("Café".encode("cp1252"), "iso-8859-1", "Café"),
        ("“quotes”".encode("cp1252"), "latin1", "“quotes”"),
        ('<meta charset="windows-1251">Привет'.encode("cp1251"), None, "Привет"),
        (
            '<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">日本'.encode(
                "shift_jis"
            ),
            None,
            "日本",
        ),
        ("\ufeffnaïve".encode(), "iso-8859-1", "naïve"),
        ("naïve".encode(), None, "naïve"),
        ("naïve".encode("cp1252"), None, "naïve"),
        ("naïve".encode(), "no-such-charset", "naïve"),
    ],
)
def test_charsets_are_read_the_way_a_browser_reads_them(
    body: bytes, declared: str | None, expected: str
) -> None:
    assert expected in charsets.decode(body, declared)


def test_charset_decoding_reaches_the_title() -> None:
    html = "<html><head><meta charset=iso-8859-15><title>Prix en €</title></head></html>"
    page = extract.extract(html.encode("iso-8859-15"), url=URL)
    assert page.title == "Prix en €"


def test_a_page_fetched_but_not_read_says_why() -> None:
    url = "https://shop.example/p"
    too_deep = extract.not_read(url, content.TooComplex("the page nests elements too deep"))
    slow = extract.not_read(url, readers.ReadTimeout("not read within 10 s"))
    broken = extract.not_read(url, ValueError("a parser bug"))
    assert [error.code for error in (too_deep, slow, broken)] == ["fetch_failed"] * 3
    assert too_deep.message == (
        "https://shop.example/p was fetched but not read: the page nests elements too deep. "
        "Lookout reads pages within a CPU budget; this one is built to exceed it."
    )
    assert slow.message == (
        "https://shop.example/p was fetched but not read: not read within 10 s. Lookout reads "
        "pages within a time budget; this one exceeded it."
    )
    assert broken.message == "https://shop.example/p was fetched but could not be read."
