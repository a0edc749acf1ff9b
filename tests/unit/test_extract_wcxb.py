"""Real non-article pages (tests/corpus/wcxb: a pricing page, a concert calendar, a listing of
reviews, a forum thread, a product page; CC-BY-4.0) read as web.scrape reads them."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from lookout.capabilities import charsets, content, extract

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "wcxb"


def _page(name: str) -> bytes:
    return gzip.decompress((CORPUS / f"{name}.html.gz").read_bytes())


def _sample(fid: str) -> bytes:
    """WCXB page `fid` of tests/corpus/wcxb/sample (bench/kinds.py's pages)."""
    return _page(f"sample/html/{fid}")


def _markdown(name: str, url: str) -> str:
    read = extract.extract(_page(name), url=url, formats=("markdown", "text"))
    assert read.markdown is not None
    return read.markdown


def test_a_main_with_role_main_is_the_page_s_one_main() -> None:
    # <main role="main"> matched both halves of "main, [role=main]": taken for two mains, the
    # region fell back to the whole body, cookie banner included.
    tree = extract._parse(charsets.decode(_page("pricing_wcxb5687"), None))
    extract._drop(tree, content.JUNK)
    content.drop_chrome(tree)

    region = content.region_of(tree)

    assert region is not None and region.tag == "main"
    text = region.text(separator=" ")
    assert "AccountEdge Pro" in text
    assert "We use cookies" not in text


def test_an_image_without_a_source_keeps_its_alt_text_and_no_empty_target() -> None:
    markdown = _markdown(
        "events_wcxb5335", "https://www.songkick.com/metro-areas/26330-us-sf-bay-area"
    )

    assert "](<>)" not in markdown  # was 54 times
    assert "Mark Normand at San Jose Improv" in markdown
    assert not re.search(r"(?m)^\s*[-*+]\s*$", markdown)


def test_links_with_nothing_to_click_are_gone_even_with_a_title() -> None:
    markdown = _markdown("listing_wcxb0282", "https://bestmobileappawards.com/mobile-app-reviews")

    assert not re.search(r"\[\s*\]\(", markdown)  # `[](https://... "Read the ... review")`
    assert "budgeting apps" in markdown


def test_a_thread_served_only_to_readers_without_javascript_is_read_from_noscript() -> None:
    # Flarum renders the thread in <noscript id="flarum-content">; without it the page read as
    # its "Loading..." notice (0 words of the thread).
    url = "https://discuss.flarum.org/d/2068-types-of-threads-flarum-as-a-discussion-engine"
    markdown = _markdown("forum_wcxb0557", url)

    assert "I just joined today, and posted a few ideas into the Real Time Chat thread" in markdown
    assert "Loading..." not in markdown


def test_a_thread_trafilatura_reads_only_without_its_links_is_read_whole() -> None:
    # Rick Steves' travel forum (WCXB dev page 4087, in tests/corpus/wcxb/sample): trafilatura
    # asked to keep links took the replies for link lists and kept the first post (101 words);
    # its default mode, the retry for a page read short, kept 297. Without links: the thread.
    page = _sample("4087")
    url = "https://community.ricksteves.com/travel-forum/beyond-europe/first-trip-to-japan"

    read = extract.extract(page, url=url, formats=("text", "links"))

    text = " ".join((read.text or "").split())
    assert "The company we have used for the guided hiking is MT Sobek" in text  # a reply
    assert "Youtube can be the most recent information available." in text  # the last one
    assert "Terms of Service" not in text and "Travel Tips & Talks" not in text
    assert len(read.links) > 50  # the page's links are still listed


def test_noscript_notices_stay_out_of_a_page_that_shows_its_content() -> None:
    html = (
        b"<html><body><noscript>Please enable JavaScript to use this site.</noscript>"
        b"<main><h1>Opening hours</h1><p>We are open from nine to five on weekdays and from ten"
        b" to two on Saturdays, closed on Sundays and public holidays.</p></main></body></html>"
    )

    markdown = extract.extract(html, url="https://example.com/hours").markdown or ""

    assert "nine to five" in markdown
    assert "enable JavaScript" not in markdown


def test_a_page_react_streams_is_read_as_its_script_assembles_it() -> None:
    # React's streaming server rendering: the content comes in <div hidden id="S:n">, moved
    # into place by $RC / $RS. Without that the product page read as "Skip to Main Content".
    markdown = _markdown("product_wcxb0620", "https://www.wayfair.com/furniture/pdp/chair.html")

    assert "Hand-applied individual antique brass head nail trim" in markdown
    assert "$273.99" in markdown
    assert "Loading" not in markdown


def test_streamed_parts_replace_their_placeholders_where_they_stand() -> None:
    html = (
        b'<html><body><main><h1>Tent</h1><!--$?--><template id="B:0"></template>'
        b"<p>Loading price...</p><!--/$--><p>Ships in two days.</p>"
        b'<template id="P:1"></template></main><footer>Shop</footer>'
        b'<div hidden id="S:0"><p>Price: $120.00</p></div>'
        b'<script>$RC("B:0","S:0")</script>'
        b'<div hidden id="S:1"><p>In stock.</p></div>'
        b'<script>$RS("S:1","P:1")</script></body></html>'
    )

    text = extract.extract(html, url="https://example.com/tent", formats=("text",)).text or ""

    assert text.split("\n\n") == ["Tent", "Price: $120.00", "Ships in two days.", "In stock."]


def test_empty_list_items_go_and_code_blocks_stay_as_they_are() -> None:
    html = (
        b"<html><body><main><h1>Setup</h1><p>Install it, then list the items.</p>"
        b"<ul><li><i class=icon></i></li><li>Real item</li><li></li></ul>"
        b"<ol><li></li><li>First step</li></ol>"
        b"<pre><code>items:\n-\n- a\n</code></pre>"
        b'<p><a href="/x" title=" "> </a>See <a href="/y"><img alt="the chart"></a>.</p>'
        b"</main></body></html>"
    )

    markdown = extract.extract(html, url="https://example.com/docs").markdown or ""

    assert markdown.splitlines()[:7] == [
        "# Setup", "", "Install it, then list the items.", "", "- Real item", "", "2. First step",
    ]  # fmt: skip
    assert "```\nitems:\n-\n- a\n```" in markdown
    assert "See [the chart](https://example.com/y)." in markdown
    assert "[](" not in markdown and "[ ](" not in markdown


@pytest.mark.parametrize(
    ("fid", "url", "kept"),
    [
        (  # WooCommerce: Yoast's graph says Article, WooCommerce's says Product
            "0592",
            "https://www.forestwholefoods.co.uk/product/organic-sunflower-seeds/",
            ["# Organic EU Sunflower Seeds", "From: £2.98",
             "Organic sunflower seeds start as the centre of the beautiful, bright yellow"],
        ),
        (
            "0594",
            "https://nordrepublic.com/product/nord-zero/",
            ["# Minimalist Sandals Nörd Zero", "99,90€", "Rated **4.76** out of 5"],
        ),
    ],
)  # fmt: skip
def test_a_shop_page_that_also_says_it_is_an_article_keeps_its_product_s_name_and_price(
    fid: str, url: str, kept: list[str]
) -> None:
    # Read as an article, the page was the product's description alone: no name, no price.
    page = _sample(fid)

    markdown = extract.extract(page, url=url).markdown or ""

    for text in kept:
        assert text in markdown
    assert "Related products" not in markdown and "You may also like" not in markdown


def test_a_product_marked_up_in_microdata_keeps_its_price_and_description() -> None:
    # A watch shop (Salesforce Commerce Cloud) says it is a product in microdata only: read as
    # an undeclared page, trafilatura's reading (the reviews, the brand's story) won, and the
    # price, the description and the specifications were gone.
    page = _sample("0586")

    url = "https://www.mvmt.com/mens-view-all/moon-silver/28000436.html"
    markdown = extract.extract(page, url=url).markdown or ""

    assert "$168.00" in markdown and "Only A Few Left" in markdown
    assert "The Classic II sticks to its roots that minimalism is" in markdown
    assert "Movement Type Japanese Quartz Movement - 2315" in markdown


def test_inline_code_stays_in_its_sentence() -> None:
    # trafilatura writes inline <code> as <pre>: inside a paragraph an HTML parser closes the
    # paragraph there, and the markdown fenced each word apart ("The default level is", a code
    # block of WARNING, ", which means..."); Python's logging HOWTO had 468 fence lines.
    page = _sample("2859")

    read = extract.extract(page, url="https://docs.python.org/3/howto/logging.html",
                           formats=("markdown", "text"))  # fmt: skip

    markdown, text = read.markdown or "", read.text or ""
    assert "The default level is `WARNING`, which means that only events" in markdown
    assert "than* `NullHandler` *to your library" in markdown  # its words still apart
    assert "than NullHandler to your library" in text
    assert markdown.count("```") < 100


_SHOP = """<html><head><script type="application/ld+json">{"@graph": [
{"@type": "Article", "headline": "Trail tent"}, {"@type": "Product", "name": "Trail Tent 2P",
"offers": {"price": "249.00", "availability": "https://schema.org/InStock"}}]}</script></head>
<body><div class="top"><h1>Outdoor Shop</h1><p>Free delivery on orders over 50 pounds.</p></div>
<div class="product"><div class="summary"><h1>Trail Tent 2P</h1><p class="price">£249.00</p>
<p class="stock">In stock</p></div><div class="tabs">
<div class="panel entry-content" id="tab-description"><h2>Description</h2>
<p>A two person tent for long trails, with a porch for boots and packs, pitched in five
minutes by one person. Its flysheet is silicone coated and sheds rain all night long.</p>
<p>The inner tent hangs from the poles, so it stays dry when pitched in the rain, and packs
small enough to carry on a bicycle or in a day pack for a weekend away in the hills.</p>
</div></div></div></body></html>"""


def test_a_product_s_name_block_is_its_own_heading_not_the_shop_s() -> None:
    html = _SHOP.encode()

    text = extract.extract(html, url="https://example.com/tent", formats=("text",)).text or ""

    assert text.startswith("Trail Tent 2P\n\n£249.00\n\nIn stock\n\n")
    assert "A two person tent for long trails" in text
    assert "Outdoor Shop" not in text and "Free delivery" not in text
    # Where the article already names the product, nothing is added before it.
    said = _SHOP.replace("<h2>Description</h2>", "<h2>Trail Tent 2P</h2>").encode()
    again = extract.extract(said, url="https://example.com/tent", formats=("text",)).text or ""
    assert "£249.00" not in again and again.startswith("Trail Tent 2P\n\nA two person tent")


def test_inline_elements_side_by_side_are_read_as_separate_words() -> None:
    # REI's listing (WCXB dev page 2951) writes each card's brand and name as two spans: read
    # as "MerrellMoab 3 Mid...", a watch asked about "Merrell Moab 3" could not find it.
    page = _sample("2951")

    read = extract.extract(page, url="https://www.rei.com/c/hiking-boots", formats=("text",))

    text = read.text or ""
    assert "Merrell Moab 3 Mid Waterproof Hiking Boots - Women's" in text
    assert "MerrellMoab" not in text


def test_a_space_goes_only_where_two_words_would_run_together() -> None:
    html = (
        b"<html><body><main><h1>Tee</h1><p>Sizes: <a>XS</a><a>S</a><a>M</a></p>"
        b"<p>H<sub>2</sub>O, x<sup>2</sup>, <span>m</span><sup>3</sup>, <b>$5</b><i>.00</i>,"
        b" <span>Price:</span><span>$9</span></p></main></body></html>"
    )
    spaced = html.replace(b"<a>S</a>", b" <a>S</a> ")

    read = extract.extract(html, url="https://example.com/t", formats=("text",))
    again = extract.extract(spaced, url="https://example.com/t", formats=("text",))

    assert (read.text or "").split("\n\n") == [
        "Tee", "Sizes: XS S M", "H2O, x2, m3, $5.00, Price:$9",
    ]  # fmt: skip
    assert read.content_hash == again.content_hash  # a space between them was markup only
