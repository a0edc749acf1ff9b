"""Extraction per kind of page (tests/corpus/kinds): the content kept, the chrome gone."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from lookout.capabilities import content, extract, metadata, prunes
from tests.corpus import mutations

KINDS = Path(__file__).resolve().parent.parent / "corpus" / "kinds"
URL = "https://site.example/section/page.html"


def _read(name: str, **options: object) -> extract.Extracted:
    options.setdefault("formats", ("markdown", "text"))
    body = (KINDS / f"{name}.html").read_bytes()
    return extract.extract(body, url=URL, **options)  # type: ignore[arg-type]


def _both(page: extract.Extracted) -> tuple[str, str]:
    assert page.markdown is not None and page.text is not None
    return page.markdown, page.text


@pytest.mark.parametrize(
    ("kind", "kept", "gone"),
    [
        (
            "article",
            ["The river rose", "two metres", "What to do", "Move cars to high ground",
             "Ashford", "4.2 m", 'level = read_gauge("ashford")', "up to 40 mm"],
            ["World", "Sport", "We use cookies", "Most read", "Celebrity gossip",
             "morning briefing", "Copyright 2024", "do not include me"],
        ),
        (
            "product",
            ["Trailblazer 2 Hiking Boot", "£129.00", "£159.00",
             "In stock \u2013 ships within 24 hours", "waterproof full-grain leather boot",
             "Vibram Megagrip outsole", "540 g per boot"],
            ["Men", "Women", "Search our store", "Cart (0)", "We use cookies", "Add to cart",
             "All rights reserved", "Privacy policy", "ShopifyAnalytics"],
        ),
        (
            "listing",
            ['12 results for "standing desk"', "Flexi Pro Electric Standing Desk", "$499.00",
             "Oak Riser Manual Desk", "$289.00", "Lift Duo Dual-Motor Desk", "$649.00",
             "Compact 60 Standing Desk", "$349.00", "Corner L-Shaped Standing Desk", "$799.00",
             "4.4 out of 5 (63 reviews)"],
            ["Chairs", "Deals", "Relevance", "Next", "DeskWorld Inc.", "Terms"],
        ),
        (
            "menu",
            ["Our Menu", "Antipasti", "Bruschetta al pomodoro", "€7.50", "Burrata pugliese",
             "€12.00", "Cacio e pepe", "€13.00", "Lasagna della nonna", "€14.50", "Tiramisù",
             "€6.00", "Beef ragù, béchamel, parmigiano"],
            ["Book a table", "Facebook", "Instagram", "P.IVA"],
        ),
        (
            "prices",
            ["Simple, transparent pricing", "Starter", "100 GB", "$5", "Business", "$99",
             "Contact sales", "Prices exclude VAT"],
            ["Features", "Log in", "Careers", "© 2024 CloudBox"],
        ),
        (
            "events",
            ["What's on in March 2025", "Tue 4 March, 7:00 pm", "Pub Quiz Night", "£3 entry",
             "Sat 8 March, 10:00 am", "Repair Café", "Spring Choir Concert", "£8, children free",
             "Farmers' Market", "Car park"],
            ["Hire the hall", "Donate", "Sign up for monthly updates", "12 Mill Lane",
             "Registered charity"],
        ),
        (
            "docs",
            ["Installing", "Widgetlib supports Python 3.9 and newer", "pip install widgetlib",
             "From source", "pip install -e widgetlib", "Building from source needs a C compiler",
             "WIDGET_CACHE", "~/.cache/widget"],
            ["Search docs", "API reference", "Previous", "Built with", "© Copyright 2024"],
        ),
        (
            "forum",
            ["Boiler pressure keeps dropping", "My combi boiler drops from 1.5 bar to 0.5 bar",
             "heatingpro", "expansion vessel probably needs recharging to 1 bar",
             "it has held 1.4 bar since"],
            ["Register", "Login", "Board index", "Powered by", "Skip to content"],
        ),
        (
            "table_only",
            ["US dollar", "USD", "1.0832", "Japanese yen", "162.15", "Swiss franc", "0.9612"],
            [],
        ),
        (
            "divsoup",
            ["Opening hours and contact", "Membership is free for residents",
             "Monday to Friday: 9:00 \u2013 19:00", "Sunday: closed", "Phone 01632 960123"],
            ["Quick links", "Renew a book", "Oakfield Borough Council"],
        ),
    ],
)  # fmt: skip
def test_each_kind_of_page_keeps_its_content_and_drops_its_chrome(
    kind: str, kept: list[str], gone: list[str]
) -> None:
    markdown, text = _both(_read(kind))
    for wanted in kept:
        assert wanted in text, wanted
        assert wanted.replace("$", "\\$") in markdown or wanted in markdown, wanted
    for chrome in gone:
        assert chrome not in markdown, chrome
        assert chrome not in text, chrome


def test_every_item_of_a_listing_is_kept_in_order() -> None:
    _, text = _both(_read("listing"))
    names = re.findall(r"^(?:- )?(.*Desk)$", text, flags=re.MULTILINE)
    assert names == [
        "Flexi Pro Electric Standing Desk",
        "Oak Riser Manual Desk",
        "Lift Duo Dual-Motor Desk",
        "Compact 60 Standing Desk",
        "Corner L-Shaped Standing Desk",
    ]


def test_tables_come_out_as_markdown_tables() -> None:
    markdown, _ = _both(_read("prices"))
    assert re.search(r"^\| Plan +\| Storage +\| Users +\| Price per month +\|$", markdown, re.M)
    assert re.search(r"^\| Team +\| 1 TB +\| 10 +\| \$25 +\|$", markdown, re.M)
    markdown, _ = _both(_read("table_only"))
    assert re.search(r"^\| Pound sterling +\| GBP +\| 0\.8571 +\|$", markdown, re.M)


def test_markdown_keeps_structure_links_and_alt_text_but_no_pixels_or_empty_links() -> None:
    markdown, text = _both(_read("article"))
    assert "# River levels rise again" in markdown and "## What to do" in markdown
    assert "- Move cars to high ground" in markdown
    assert '```\nlevel = read_gauge("ashford")\n```' in markdown
    assert "[last year's flood](https://site.example/2023/flood.html#map)" in markdown
    assert "![The river at dawn](https://site.example/img/river.jpg)" in markdown
    assert "pixel.gif" not in markdown and "](" not in text
    assert "The river at dawn" not in text  # an image is not text
    listing, _ = _both(_read("listing"))
    assert "[Flexi Pro Electric Standing Desk](https://site.example/p/flexi-pro)" in listing
    product, _ = _both(_read("product"))
    assert "pixel.tracker" not in product and "[]" not in product and "![]" not in product


def test_only_main_content_off_returns_the_whole_page_without_scripts() -> None:
    markdown, text = _both(_read("product", only_main_content=False))
    for everything in ("Men", "Search", "Trailblazer 2 Hiking Boot", "£129.00", "All rights"):
        assert everything in text
    assert "ShopifyAnalytics" not in markdown and "color:#c00" not in markdown


def test_metadata_is_what_the_page_states() -> None:
    assert _read("article").metadata == {
        "title": "River levels rise again | Valley News",
        "description": "Flood watch for the valley.",
        "language": "en-GB",
        "canonical_url": "https://news.example/2024/05/river-levels",
        "published_at": "2024-05-02T07:30:00+01:00",
        "modified_at": "2024-05-02T11:05:00+01:00",
        "author": None,  # the byline is text, not a stated author
    }
    assert _read("table_only").metadata == {
        "title": "Exchange rates",
        "description": None,
        "language": None,
        "canonical_url": None,
        "published_at": None,
        "modified_at": None,
        "author": None,
    }


def test_the_names_a_page_gives_its_product() -> None:
    page = (
        '<html><head><meta property="og:type" content="product">'
        '<meta property="og:title" content="Trail Tent | Outdoor Shop">'
        '<script type="application/ld+json">{"@graph": [{"@type": "Organization", "name": '
        '"Outdoor Shop"}, {"@type": ["Product"], "name": "Trail Tent"}, {"@type": '
        '"ProductGroup", "name": "Trail Tents"}, {"@type": "Product", "name": " "}]}</script>'
        "</head><body><h1>Trail Tent</h1></body></html>"
    )

    _, kinds, names = metadata.read_with_kinds(extract._parse(page), URL)

    assert {"product", "productgroup", "organization"} <= kinds
    assert names == ("Trail Tent", "Trail Tents", "Trail Tent | Outdoor Shop")
    article = page.replace('content="product"', 'content="article"').replace("Product", "Thing")
    assert metadata.read_with_kinds(extract._parse(article), URL)[2] == ()


def test_a_product_in_microdata_says_what_the_page_is_and_what_it_is_called() -> None:
    page = (
        '<html><body><div itemscope itemtype="https://schema.org/Product">'
        '<meta itemprop="name" content="Classic II">'
        '<div itemprop="offers" itemscope itemtype="https://schema.org/Offer">'
        '<span itemprop="name">Offer name</span></div></div>'
        '<div itemscope itemtype="http://schema.org/ProductGroup http://schema.org/Thing/">'
        '<div itemprop="review" itemscope itemtype="https://schema.org/Review">'
        '<span itemprop="name">A review</span></div><h1 itemprop="name">Classic  Watches</h1>'
        '</div><div itemscope itemtype="https://schema.org/DiscussionForumPosting">'
        '<span itemprop="name">A thread</span></div></body></html>'
    )

    _, kinds, names = metadata.read_with_kinds(extract._parse(page), URL)

    # Top-level products only: an item that is another's property (the offer) says nothing of
    # the page; other types (a thread) are not read from microdata.
    assert kinds == {"product", "productgroup", "thing"}
    assert names == ("Classic II", "Classic  Watches")


def test_a_microdata_product_s_name_is_found_in_bounded_time() -> None:
    # 20,000 names 3,000 levels under an item nested in the product: each climbed to its item
    # and compared nodes by their HTML (lexbor's ==): minutes. Now a few, a few levels each.
    deep = 3000
    page = (
        '<html><body><div itemscope itemtype="https://schema.org/Product"><div itemscope>'
        + "<div>" * deep
        + '<span itemprop="name">inner</span>' * 20_000
        + "</div>" * deep
        + '</div><meta itemprop="name" content="Classic II"></div></body></html>'
    )
    tree = extract._parse(page)

    started = time.process_time()
    _, kinds, names = metadata.read_with_kinds(tree, URL)
    spent = time.process_time() - started

    assert "product" in kinds
    assert names == ()  # its own name is past the names looked at: none rather than "inner"
    assert spent < 2.0  # 0.01 s here


def test_dates_from_json_ld_and_relative_canonical_links() -> None:
    page = extract.extract(
        b'<html lang="fr_FR"><head><link rel="canonical" href="/a/b">'
        b'<script type="application/ld+json">{"@graph": [{"@type": "NewsArticle", '
        b'"datePublished": "2025-01-02T03:04:05Z", "dateModified": "2025-01-03"}]}</script>'
        b"</head><body><p>Words.</p></body></html>",
        url=URL,
    )
    assert page.metadata["language"] == "fr-FR"
    assert page.metadata["canonical_url"] == "https://site.example/a/b"
    assert page.metadata["published_at"] == "2025-01-02T03:04:05Z"
    assert page.metadata["modified_at"] == "2025-01-03"


@pytest.mark.parametrize(
    ("head", "body", "author"),
    [
        # A Yoast graph names its author by reference to a Person elsewhere in it.
        ('<script type="application/ld+json">{"@graph": [{"@type": "Article", "author": '
         '{"@id": "https://s.example/#/schema/person/1"}}, {"@type": "Person", "@id": '
         '"https://s.example/#/schema/person/1", "name": "Anna Menin"}]}</script>', "",
         "Anna Menin"),
        ('<meta name="byl" content="By Jamelle Bouie">', "", "Jamelle Bouie"),
        ("", '<span itemprop="author" itemscope itemtype="https://schema.org/Person">'
         '<a href="/u/1"><span itemprop="name">Emiliano Bellini</span></a> in Seoul</span>',
         "Emiliano Bellini"),
        ("", '<a itemprop="author" href="/u/noah">Noah_B</a>', "Noah_B"),
        # An author's box is no name.
        ("", '<div itemprop="author">' + "Noah writes about trains and the cities they join. "
         * 3 + "</div>", None),
        ('<meta name="author" content="https://www.facebook.com/someone">', "", None),
    ],
)  # fmt: skip
def test_the_author_a_page_states(head: str, body: str, author: str | None) -> None:
    page = f"<html><head>{head}</head><body>{body}<p>Words.</p></body></html>".encode()

    assert extract.extract(page, url=URL).metadata["author"] == author


@pytest.mark.parametrize(
    ("html", "head", "language"),
    [
        ('<html xml:lang="en">', "", "en"),
        ('<html lang="">', '<meta property="og:locale" content="en_GB">', "en-GB"),
        ("<html>", '<meta name="language" content="English"><script type="application/ld+json">'
         '{"@type": "NewsArticle", "inLanguage": "pt-BR"}</script>', "pt-BR"),
        ("<html>", '<meta name="language" content="English">', None),
    ],
)  # fmt: skip
def test_the_language_a_page_states(html: str, head: str, language: str | None) -> None:
    page = f"{html}<head>{head}</head><body><p>Words.</p></body></html>".encode()

    assert extract.extract(page, url=URL).metadata["language"] == language


@pytest.mark.parametrize(
    ("head", "published", "modified"),
    [
        # Names htmldate knows (the New York Times, Reuters, Sputnik wrote these).
        ('<meta property="article:published" content="2019-11-19T11:00:09.000Z">'
         '<meta property="article:modified" content="2019-11-19T11:00:08.000Z">',
         "2019-11-19T11:00:09.000Z", "2019-11-19T11:00:08.000Z"),
        ('<meta name="pubdate" content="2019-11-18T21:17:27Z">'
         '<meta property="og:article:modified_time" content="2019-11-19T21:57:01+0000">',
         "2019-11-18T21:17:27Z", "2019-11-19T21:57:01+0000"),
        # Written out with the month's name: read, the offset kept, GMT+0530 east of Greenwich.
        ('<meta property="article:published_time" content="November 19, 2019, 07:47 PM EST">'
         '<meta http-equiv="last-modified" content="19 Nov 2019 21:09 GMT">',
         "2019-11-19T19:47:00", "2019-11-19T21:09:00+00:00"),
        ('<script type="application/ld+json">{"@type": "NewsArticle", "datePublished": '
         '"Mon, 18 Nov 2019 16:07:38 -0600", "dateModified": '
         '"Tue Nov 19 2019 05:44:06 GMT+0530"}</script>',
         "2019-11-18T16:07:38-06:00", "2019-11-19T05:44:06+05:30"),
        # ISO 8601 wherever it is stated wins over a date written out before it; a raw line
        # break in a JSON-LD string (a pasted headline) does not hide the rest.
        ('<meta property="article:published_time" content="November 20, 2019 12:32">'
         '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Lexus\n'
         'convertible", "datePublished": "2019-11-20 12:32:13+08:00"}</script>',
         "2019-11-20 12:32:13+08:00", None),
        # Numbers alone do not say which is the day, a month and a year which day: nothing
        # rather than a guess. A day without a time is a day, not its midnight.
        ('<meta name="date" content="01/02/2019"><meta name="timestamp" content="1574168580">'
         '<meta name="pubdate" content="May 2019"><meta name="lastmod" content="May 2019 10:00">',
         None, None),
        ('<meta name="pubdate" content="Tuesday, 19 November 2019">', "2019-11-19", None),
        ('<script type="application/ld+json">{"@type": "NewsArticle", "dateCreated": '
         '"2019-11-19T21:57:01+0000"}</script>', "2019-11-19T21:57:01+0000", None),
    ],
)  # fmt: skip
def test_the_dates_a_page_states_in_the_ways_pages_state_them(
    head: str, published: str | None, modified: str | None
) -> None:
    page = f"<html><head>{head}</head><body><p>Words.</p></body></html>".encode()

    about = extract.extract(page, url=URL).metadata

    assert (about["published_at"], about["modified_at"]) == (published, modified)


@pytest.mark.parametrize(
    ("kind", "before", "after"),
    [
        ("article", "two metres", "three metres"),
        ("product", "£129.00", "£119.00"),
        ("listing", "$499.00", "$479.00"),
        ("menu", "€7.50", "€8.50"),
        ("events", "£3 entry", "£4 entry"),
    ],
)
def test_the_hash_is_blind_to_markup_and_sees_content(kind: str, before: str, after: str) -> None:
    html = (KINDS / f"{kind}.html").read_text()
    restyled = html.replace("<h1", '<h1 class="x-title" style="color:red"').replace(
        "<body", '<body data-build="2025-01-02"'
    )
    restyled = restyled.replace("</head>", "<style>p{margin:0}</style><script>x=1</script></head>")
    edited = html.replace(before, after)
    assert edited != html

    def hashed(page: str) -> str:
        return extract.extract(page.encode(), url=URL).content_hash

    assert hashed(restyled) == hashed(html)
    assert hashed(edited) != hashed(html)


def test_a_deeply_nested_page_is_refused_with_a_clear_error() -> None:
    page = "<html><body>" + "<div>" * 200_000 + "deep" + "</div>" * 200_000 + "</body></html>"
    with pytest.raises(content.TooComplex, match="more than 5000 deep"):
        extract.extract(page.encode(), url=URL)


def test_stray_end_tags_do_not_hide_deep_nesting() -> None:
    page = "<html><body>" + "<div></b>" * 6000 + "deep"
    with pytest.raises(content.TooComplex):
        extract.extract(page.encode(), url=URL)


def test_a_page_nested_deeply_but_within_the_bound_is_read() -> None:
    page = "<html><body><main>" + "<div>" * 4000 + "<p>Still here.</p>" + "</div>" * 4000
    read = extract.extract((page + "<p>After the nest.</p></main></body></html>").encode(), url=URL)
    assert "After the nest." in (read.markdown or "")


def test_a_page_of_100000_elements_is_read_without_trafilatura() -> None:
    rows = "".join(f"<tr><td>item {i}</td><td>{i} EUR</td></tr>" for i in range(50_000))
    page = f"<html><body><nav>Home</nav><main><table>{rows}</table></main></body></html>"
    read = extract.extract(page.encode(), url=URL, formats=("text",), max_chars=10_000_000)
    text = read.text or ""
    assert "item 0\t0 EUR" in text and "item 49999\t49999 EUR" in text
    assert "Home" not in text


def test_the_author_a_page_states_in_meta_or_json_ld() -> None:
    meta = b'<html><head><meta name="author" content="Maria Okafor"></head><body><p>x</p></body>'
    ld = (
        b'<html><head><script type="application/ld+json">{"@type": "NewsArticle", "author": '
        b'[{"@type": "Person", "name": "Ana Lima"}, {"name": "Jo Ng"}]}</script></head>'
        b"<body><p>x</p></body></html>"
    )
    profile = b'<html><head><meta name="author" content="https://x.example/u/1"></head></html>'
    assert extract.extract(meta, url="https://a.example/").metadata["author"] == "Maria Okafor"
    assert extract.extract(ld, url="https://a.example/").metadata["author"] == "Ana Lima, Jo Ng"
    assert extract.extract(profile, url="https://a.example/").metadata["author"] is None


def _article(url_part: str) -> str:
    """The HTML of the one page of the real article corpus whose URL has `url_part`."""
    (page,) = [key for key, entry in mutations.truth().items() if url_part in entry["url"]]
    return mutations.page_html(page)


@pytest.mark.parametrize(
    ("url_part", "kept", "gone"),
    [
        (  # the article is text between <br>s in a <div>: fast mode took a sidebar's 53 words
            "macrumors.com/2019/11/18/13-inch-macbook-pro",
            ["Following the 16-inch MacBook Pro, Apple plans to release a new 13-inch",
             "Wistron and Global Lighting Technologies are said to be among the suppliers"],
            ["Night mode is an automatic setting"],
        ),
        (  # fast mode fell back to the whole page: 900 words of menus around 100 of news
            "jaraguadosul.com.br/news/servi-o-de-atendimento",
            ["A equipe do Serviço de Atendimento Domiciliar (SAD), do bairro Amizade",
             "Foi feito boletim de ocorrência"],
            ["Ortofotos de 2005", "Galeria dos Prefeitos", "Esqueci a Senha"],
        ),
    ],
)  # fmt: skip
def test_a_real_page_that_fast_mode_under_reads_is_read_in_trafilaturas_default_mode(
    url_part: str, kept: list[str], gone: list[str]
) -> None:
    html = _article(url_part)
    page = extract.extract(html.encode(), url=URL, formats=("markdown", "text"))
    markdown, text = _both(page)
    for wanted in kept:
        assert wanted in text, wanted
    for chrome in gone:
        assert chrome not in text, chrome
        assert chrome not in markdown, chrome


def test_the_default_mode_s_stoplist_is_made_once_as_a_set_and_reads_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import justext.core
    from trafilatura import external

    pages = [
        _article(part).encode()
        for part in ("macrumors.com/2019/11/18", "jaraguadosul.com.br/news/servi-o")
    ]  # both read in default mode, where jusText classifies their paragraphs
    classified: list[type] = []
    classify = justext.core.classify_paragraphs

    def counted(paragraphs: object, stoplist: object, *args: object, **kwargs: object) -> object:
        classified.append(type(stoplist))
        return classify(paragraphs, stoplist, *args, **kwargs)

    monkeypatch.setattr(external, "classify_paragraphs", counted)

    def read() -> list[tuple[str | None, str | None, str]]:
        found = [extract.extract(page, url=URL, formats=("markdown", "text")) for page in pages]
        return [(page.markdown, page.text, page.content_hash) for page in found]

    as_set = read()
    assert classified == [frozenset, frozenset]
    with prunes.as_shipped():  # for bench/extract.py's trafilatura, as a user runs it
        assert isinstance(external.JT_STOPLIST, tuple)
    assert isinstance(external.JT_STOPLIST, frozenset)
    monkeypatch.setattr(external, "JT_STOPLIST", tuple(external.JT_STOPLIST))  # as trafilatura
    assert read() == as_set
    assert classified[2:] == [tuple, tuple]
