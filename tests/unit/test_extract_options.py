"""The conversion options extract passes as enum members are html-to-markdown's own defaults:
the markdown and text are what the library's string defaults give."""

from __future__ import annotations

import html_to_markdown
from html_to_markdown import api

from lookout.capabilities import extract

PAGE = """<h1>Title</h1><h2>Sub</h2><p>Some <strong>bold</strong>, <em>em</em>, <mark>mark</mark>,
a <a href="/rel">link</a>, <code>x = 1</code> and a line<br>break.</p>
<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul><ol><li>first</li></ol>
<pre><code class="language-py">def f():\n    return 1\n</code></pre>
<table><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>$3</td></tr></table>
<blockquote>Quoted</blockquote><p hidden>hidden text</p><img src="/a b.png" alt="A picture">"""


def test_each_enum_member_is_the_library_default() -> None:
    # As the library itself reads its string default (the coercion `convert` runs every call)
    defaults = html_to_markdown.ConversionOptions()
    members = extract._enum_defaults()
    assert set(members) == set(extract._ENUM_OPTIONS)
    for name, member in members.items():
        enum = getattr(html_to_markdown, extract._ENUM_OPTIONS[name])
        assert member == api._coerce_enum(enum, getattr(defaults, name)), name


def test_the_output_is_what_the_string_defaults_give() -> None:
    for output in ("markdown", "plain"):
        ours = extract._convert(PAGE, "https://example.com/a/", output)
        theirs = html_to_markdown.convert(
            PAGE,
            html_to_markdown.ConversionOptions(
                output_format=output, base_url="https://example.com/a/",
                extract_metadata=False, autolinks=False, compact_tables=True,
                tier_strategy="tier1" if output == "markdown" else "auto",
                inline_data_media=html_to_markdown.InlineDataMedia.ALT_TEXT_ONLY,
                preprocessing=html_to_markdown.PreprocessingOptions(enabled=False),
            ),
        ).content  # fmt: skip
        assert ours == (theirs or "").strip() and "Tea" in ours and "nested" in ours, output
