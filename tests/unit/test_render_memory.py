"""A watched page that needed a browser keeps being rendered, and what changed compares what the
browser showed."""

from __future__ import annotations

import datetime as dt
import types
from typing import Any

from lookout.agent import looks

URL = "https://shop.example/lantern"


def _ctx() -> Any:
    return types.SimpleNamespace(now=dt.datetime(2026, 12, 2, tzinfo=dt.UTC), scheduled=True,
                                 diffs=[], pages_read=[], rendered_urls=set())  # fmt: skip


def _page(markdown: str, *, rendered: bool) -> dict[str, Any]:
    return {"url": URL, "title": "Lantern", "markdown": markdown, "rendered": rendered}


def test_a_page_that_was_rendered_is_rendered_again() -> None:
    pages: dict[str, Any] = {}
    assert looks.render_for([URL], pages) == {}
    looks.page(_page("# Lantern 3000\n\nIn stock at 59 euros.", rendered=True), _ctx(), pages)
    assert looks.render_for([URL], pages) == {"render": "always"}
    # A later look that happened not to render (an older client) does not forget it.
    looks.page(_page("# Lantern 3000\n\nIn stock at 59 euros.", rendered=False), _ctx(), pages)
    assert looks.render_for([URL, "https://other.example/"], pages) == {"render": "always"}
    assert looks.render_for(["https://other.example/"], pages) == {}


def test_what_changed_compares_the_rendered_content() -> None:
    pages: dict[str, Any] = {}
    looks.page(_page("# Lantern 3000\n\nIn stock at 59 euros.", rendered=True), _ctx(), pages)
    said = looks.page(_page("# Lantern 3000\n\nIn stock at 49 euros.", rendered=True), _ctx(),
                      pages)  # fmt: skip
    assert said is not None and "59" in said and "49" in said
