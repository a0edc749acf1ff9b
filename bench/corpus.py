"""A deterministic corpus of realistic web pages for the scrape benchmark.

Pages look like what sites serve today: a navigation bar, a cookie banner, an article with headings,
lists, tables and code, a sidebar, a footer, and a lot of inline script and style. A few pages are
200-500 KB (long tables, large inline app state) because those are the ones that hurt extraction.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

WORDS = (  # noqa: SIM905 - a prose list reads better than 70 quoted words
    "the of and to in is for on that with as by this from at are be or an was it which can new "
    "data system service city market report price user page search result update policy team "
    "energy water network river train station museum library garden project release version "
    "research model analysis growth school hospital council budget housing transport weather "
    "review product feature support guide install server client request response account"
).split()


def _sentence(rng: random.Random, low: int = 8, high: int = 22) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    body = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7)))
    link = f'<a href="/topic/{rng.randint(1, 500)}">{rng.choice(WORDS)} {rng.choice(WORDS)}</a>'
    return f"<p>{body} See {link} for <strong>more</strong>, or <em>{_sentence(rng, 3, 6)}</em></p>"


def _table(rng: random.Random, rows: int) -> str:
    head = "".join(f"<th>{rng.choice(WORDS).title()}</th>" for _ in range(5))
    body = "".join(
        "<tr>" + "".join(f"<td>{rng.randint(0, 99999)}</td>" for _ in range(5)) + "</tr>"
        for _ in range(rows)
    )
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _list(rng: random.Random) -> str:
    tag = rng.choice(("ul", "ol"))
    items = "".join(f"<li>{_sentence(rng, 4, 10)}</li>" for _ in range(rng.randint(3, 8)))
    return f"<{tag}>{items}</{tag}>"


def _nav(rng: random.Random, count: int) -> str:
    links = "".join(
        f'<li class="menu-item"><a href="/section/{i}">{rng.choice(WORDS).title()}</a></li>'
        for i in range(count)
    )
    return f'<nav class="site-nav" role="navigation"><ul class="menu">{links}</ul></nav>'


def _script(rng: random.Random, kilobytes: int) -> str:
    state = {f"k{i}": [rng.randint(0, 10**6) for _ in range(20)] for i in range(kilobytes * 6)}
    return f"<script>window.__STATE__ = {json.dumps(state)};</script>"


def _style(rng: random.Random, rules: int) -> str:
    css = "".join(
        f".c{i}{{margin:{rng.randint(0, 20)}px;color:#{rng.randint(0, 0xFFFFFF):06x}}}"
        for i in range(rules)
    )
    return f"<style>{css}</style>"


def _article(rng: random.Random, sections: int, table_rows: int) -> str:
    parts = [f"<h1>{_sentence(rng, 4, 9)[:-1]}</h1>", _paragraph(rng)]
    for index in range(sections):
        parts.append(f"<h2>{_sentence(rng, 3, 7)[:-1]}</h2>")
        parts.extend(_paragraph(rng) for _ in range(rng.randint(2, 5)))
        if index % 2 == 0:
            parts.append(_list(rng))
        if index % 3 == 1:
            parts.append(_table(rng, table_rows))
        if index % 4 == 3:
            parts.append(f"<pre><code>{_sentence(rng)}\n{_sentence(rng)}</code></pre>")
    return f'<article class="post">{"".join(parts)}</article>'


def page(index: int) -> str:
    """The HTML of corpus page `index` (same output for the same index, every run)."""
    rng = random.Random(index)
    big = index % 40 == 7
    sections = rng.randint(20, 40) if big else rng.randint(4, 12)
    table_rows = rng.randint(150, 400) if big else rng.randint(5, 25)
    script_kb = rng.randint(60, 160) if big else rng.randint(8, 40)
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Page {index}: "
        f"{_sentence(rng, 3, 6)[:-1]}</title>{_style(rng, rng.randint(50, 300))}"
        f'<meta name="description" content="{_sentence(rng)}"></head><body>'
        '<div class="cookie-banner">We use cookies. <button>Accept</button></div>'
        f"<header class=site-header><a href=/>Home</a>{_nav(rng, rng.randint(20, 80))}</header>"
        f'<div class="layout"><main id="content">{_article(rng, sections, table_rows)}</main>'
        f'<aside class="sidebar">{_list(rng)}{_list(rng)}</aside></div>'
        f'<footer class="site-footer">{_nav(rng, 30)}<p>(c) 2024 Example Ltd.</p></footer>'
        f"{_script(rng, script_kb)}</body></html>"
    )


def corpus(count: int = 200) -> Iterator[tuple[str, bytes]]:
    """(path, html bytes) for `count` pages."""
    for index in range(count):
        yield f"/pages/{index}.html", page(index).encode()


if __name__ == "__main__":
    sizes = sorted(len(body) for _, body in corpus())
    print(f"{len(sizes)} pages, median {sizes[len(sizes) // 2] // 1024} KB, ", end="")
    print(f"largest {sizes[-1] // 1024} KB, over 200 KB: {sum(s > 200_000 for s in sizes)}")
