"""The markdown's tidying, the <noscript> re-read and React's streamed parts, on the edge cases a
review found: code blocks, pages read as their region, unclosed or odd placeholders, hostile
repetitions."""

from __future__ import annotations

import time

from lookout.capabilities import extract


def _read(html: str, formats: tuple[str, ...] = ("markdown", "text")) -> extract.Extracted:
    return extract.extract(html.encode(), url="https://example.com/p", formats=formats)


def test_a_code_block_is_left_as_it_is_whatever_its_fence() -> None:
    markdown = (
        "Intro\n\n````\n```\n-\n+\n1.\n[](x)\n![a](<>)\n```\n- \n````\n\n- \n- item\n\n"
        "- Config:\n\n  ```\n  list:\n  -\n  - a\n  ```\n"
    )

    tidy = extract._tidy(markdown)

    assert "````\n```\n-\n+\n1.\n[](x)\n![a](<>)\n```\n- \n````" in tidy  # a longer fence
    assert "  ```\n  list:\n  -\n  - a\n  ```" in tidy  # a fence indented in a list item
    assert "\n- \n- item" not in tidy and "- item" in tidy  # outside code: the empty item goes


def test_one_blank_line_is_left_where_empty_images_and_items_stood() -> None:
    # A real article's image without alt text stood alone between two paragraphs: removed, it
    # left three blank lines. Inside a code block blank lines are the code's own.
    markdown = (
        "First paragraph.\n\n![](https://example.com/a.jpg)\n\nSecond.\n\n- \n  \n\n- item\n\n"
        "```\nx = 1\n\n\n\ny = 2\n```\n\n[](https://example.com/)\n\n\nLast."
    )

    tidy = extract._tidy(markdown)

    assert tidy == (
        "First paragraph.\n\nSecond.\n\n- item\n\n```\nx = 1\n\n\n\ny = 2\n```\n\nLast."
    )
    page = "<p>First.</p><p><img src='/a.jpg'></p><p>&nbsp;</p><p><img src='/b.jpg' alt=''></p>"
    page += "<p>Second.</p>"
    assert _read(page, ("markdown",)).markdown == "First.\n\nSecond."
    between = "```\na\n```\n\n![](x.png)\n\n\n```\nb\n```\n\n\n\n```\nc\n```"
    assert extract._tidy(between) == "```\na\n```\n\n```\nb\n```\n\n```\nc\n```"


def test_repeated_brackets_are_left_as_text() -> None:
    for text in ("[](" * 20_000, "![" * 20_000 + "](<>", '[](x "' * 20_000, "[" * 100_000):
        assert extract._tidy(text) == text  # nothing in them is a link (each pass is linear)


def test_a_noscript_read_on_the_region_path_is_in_the_markdown_and_the_hash() -> None:
    # A product page (og:type) is read as its region: the noscript text must be in what is
    # shown, not only in the words the hash is made of.
    page = (
        '<html><head><meta property="og:type" content="product"></head><body><main>'
        "<div id=app>Loading...</div><noscript><h2>Blue kettle</h2><p>"
        + "A kettle that boils water quickly and quietly. " * 10
        + "</p></noscript></main></body></html>"
    )

    first, recoloured = _read(page), _read(page.replace("Blue", "Red"))

    assert "## Blue kettle" in (first.markdown or "")
    assert "Red kettle" in (recoloured.text or "")
    assert first.content_hash != recoloured.content_hash
    whole = extract.extract(page.encode(), url="https://x/p", only_main_content=False)
    assert "Blue kettle" in (whole.markdown or "")


def test_an_unclosed_placeholder_takes_nothing_away() -> None:
    page = (
        '<html><body><main><h1>Shop</h1><!--$?--><template id="B:0"></template><p>Loading...</p>'
        "<p>Our long product description talks about the kettle's features.</p></main>"
        '<div hidden id="S:0"><p>Price 10 EUR</p></div><script>$RC("B:0","S:0")</script>'
        "</body></html>"
    )

    text = _read(page, ("text",)).text or ""

    assert "Our long product description" in text


def test_a_part_whose_placeholder_is_inside_an_earlier_part_is_placed_too() -> None:
    page = (
        '<html><body><main><!--$?--><template id="B:0"></template><p>Loading</p><!--/$-->'
        '</main><div hidden id="S:0"><p>Outer part.</p><!--$?--><template id="B:1"></template>'
        '<p>Loading</p><!--/$--></div><div hidden id="S:1"><p>Inner part.</p></div>'
        '<script>$RC("B:0","S:0");$RC("B:1","S:1")</script></body></html>'
    )

    assert (_read(page, ("text",)).text or "").split("\n\n") == ["Outer part.", "Inner part."]


def test_the_text_has_no_bullet_for_an_item_that_held_only_images() -> None:
    # A listing's cards each hold a gallery: a list of images. The text leaves images out, and
    # html-to-markdown wrote each emptied item as a line of "-" (ten on a real REI listing's
    # card, bench/kinds.py page 2951); the markdown keeps them, with their alt text.
    gallery = "".join(f'<li><img src="/m/{n}.jpg" alt="Moab boot {n}"></li>' for n in range(3))
    page = (
        "<html><body><main><h1>Hiking boots</h1><ul>"
        f'<li><a href="/p/1"><ul>{gallery}</ul></a><p>Moab 3 Mid boots</p><p>$170.00</p></li>'
        "<li><ul><li>\xa0</li></ul></li><li>Sizes 5 to 12</li></ul>"
        "<ol><li>First</li><li><img src=x.png></li><li>Second</li></ol>"
        "<pre>-\n*\nkept as it is</pre></main></body></html>"
    )

    read = _read(page)

    assert read.text is not None and read.markdown is not None
    lines = [line.strip() for line in read.text.split("\n") if line.strip()]
    assert lines == [
        "Hiking boots", "-", "Moab 3 Mid boots", "$170.00", "- Sizes 5 to 12",
        "1. First", "2. Second", "-", "*", "kept as it is",
    ]  # fmt: skip
    assert "Moab boot 2" in read.markdown


def test_finding_the_emptied_items_of_a_deeply_nested_list_is_linear() -> None:
    # Each item's own text, asked of every item, read a list nested N deep N times over: 5 MB
    # of 8,000 nested items took 5.4 s here (a reader's budget is 10). Now each text node once.
    depth = 8000
    html = "<main>" + ("<ul><li>" + "word " * 125) * depth + "</li></ul>" * depth + "</main>"
    gallery = "<ul><li><img src=a.png></li><li>kept</li></ul>"

    started = time.process_time()
    text = extract._plain_text(html, "https://example.com/")
    spent = time.process_time() - started

    assert text.startswith("- word word")
    assert spent < 3.0  # 0.6 s here, most of it lexbor's parse of the nesting
    tree = extract._parse(gallery)
    empty, full = tree.css("li")
    worded = extract._worded(tree)
    assert empty.mem_id not in worded and full.mem_id in worded
