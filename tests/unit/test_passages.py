"""Splitting a page into passages, ranking them, and what a model reads of a long page."""

from __future__ import annotations

from lookout.agent import passages, reading
from lookout.capabilities import sitemaps

MARKDOWN = """# Harbour Hall

Concerts all winter.

## Tickets

| Concert | Price |
| --- | --- |
| Four Seasons | €25 |
| Gala | €65 |

## Visit

- Doors open an hour before
- Parking is free after 18:00

```
no code here
```
"""


def test_split_keeps_sections_lists_and_table_rows_apart() -> None:
    found = passages.split(MARKDOWN, url="https://h.example/")
    kinds = [(p.kind, p.section) for p in found]
    assert kinds == [
        ("text", "Harbour Hall"), ("row", "Tickets"), ("row", "Tickets"),
        ("item", "Visit"), ("item", "Visit"), ("code", "Visit"),
    ]  # fmt: skip
    assert found[1].header.splitlines()[0] == "| Concert | Price |"


def test_ranked_rows_render_as_a_table_with_its_header() -> None:
    found = passages.split(MARKDOWN, url="https://h.example/")
    best = passages.rank("how much are tickets for the gala", found)
    rendered = passages.render(passages.group(best)[0])
    assert rendered.splitlines()[:2] == ["| Concert | Price |", "| --- | --- |"]
    assert "| Gala | €65 |" in rendered


def test_a_question_of_stop_words_ranks_nothing() -> None:
    assert passages.rank("what is it?", passages.split(MARKDOWN, url="https://h.example/")) == []


def test_question_words_are_not_ranked_on() -> None:
    """A watch's usual question, "what is on <url>", is not a search for the word "what": the
    page's lead answers it, not its paragraphs that say "what" or "how"."""
    markdown = "# Shop\n\nWe sell tea.\n\n## About\n\nWhat we do and how we do it: we blend."
    page = {"url": "https://s.example/", "title": "Shop", "markdown": markdown}
    found = passages.split(markdown, url=page["url"])
    assert passages.rank("what is on", found) == []
    assert passages.rank("how can you tell me about it", found) == []
    assert reading.answer("what is on https://s.example/", page) == reading.lead(page)
    assert passages.rank("what do you blend", found)[0].text.startswith("What we do")


def test_a_model_reads_the_matching_passage_of_a_long_page_first() -> None:
    filler = "\n\n".join(f"Paragraph {i} about the harbour and its ferries." for i in range(400))
    markdown = f"# Port\n\n{filler}\n\n## Fees\n\nMooring costs 42 euros a night for small boats."
    shown = passages.for_model("what does mooring cost?", markdown, url="https://p.example/",
                               limit=4_000)  # fmt: skip
    assert len(shown) <= 4_100
    assert shown.index("Mooring costs 42 euros") < shown.index("Paragraph 0 ")
    assert markdown[:4_000] not in shown  # not the page's first characters alone


def test_sitemap_lastmod_is_read_per_page() -> None:
    xml = b"""<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <url><loc>/a</loc><lastmod>2026-11-20</lastmod></url><url><loc>/b</loc></url></urlset>"""
    found = sitemaps.parse_sitemap(xml, base="https://s.example/", max_bytes=10_000)
    assert found.pages == ["https://s.example/a", "https://s.example/b"]
    assert found.lastmod == {"https://s.example/a": "2026-11-20"}
