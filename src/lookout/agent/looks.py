"""A turn's look at a source it has seen before: compare, remember, say it, keep it as data.

Both planners call these: the rule planner puts the sentence in its answer, the LLM planner hands
it to the model with the page. The data of every comparison goes to the turn (`ctx.diffs`): the
run's result and the parts notifications are made from (agent.graph).
"""

from __future__ import annotations

from typing import Any

from lookout.agent import answers, changes, results
from lookout.agent.context import TurnContext
from lookout.capabilities import registry


def _at(ctx: TurnContext) -> str:
    return ctx.now.strftime("%Y-%m-%d %H:%M UTC")


def page(page: dict[str, Any], ctx: TurnContext, pages: dict[str, Any]) -> str | None:
    """What changed on a scraped page since this chat last read it (None: a first look)."""
    prior = pages.get(page["url"])
    markdown = page.get("markdown") or ""
    entry = changes.page_entry(markdown, prior)
    title = page.get("title") or ""
    ctx.pages_read.append({"url": page["url"], "title": title, "markdown": markdown})
    looked = changes.track(
        pages, page["url"], entry, at=_at(ctx), title=title, scheduled=ctx.scheduled
    )
    # A page that needed a browser keeps getting one (auto's guess could flip on a bigger shell).
    if (page.get("rendered") or (prior or {}).get("rendered")) and page["url"] in pages:
        pages[page["url"]]["rendered"] = True
        ctx.rendered_urls.add(page["url"])
    return _said(looked, ctx)


def render_for(
    urls: list[str], pages: dict[str, Any], verb: registry.Verb | None = None
) -> dict[str, Any]:
    """The input of `verb` (by default the one that reads pages) that keeps rendering the pages
    this chat saw needed a browser."""
    verb = verb or registry.serving(registry.READ)
    rendered = any((pages.get(url) or {}).get("rendered") for url in urls)
    return dict(verb.keep_rendering or {}) if rendered else {}


def keep_rendering(
    verb: registry.Verb, arguments: dict[str, Any], pages: dict[str, Any]
) -> dict[str, Any]:
    """`arguments` made to render the pages that needed a browser, unless they say how to."""
    if verb.urls_of is None or not verb.keep_rendering or verb.keep_rendering.keys() & arguments:
        return arguments
    return arguments | render_for(verb.urls_of(arguments), pages, verb)


def found(
    verb: str, arguments: dict[str, Any], output: dict[str, Any], ctx: TurnContext,
    pages: dict[str, Any],
) -> str | None:  # fmt: skip
    """What changed in a search's, a site's or a maps search's results since the last look."""
    key = results.key_of(verb, arguments)
    entry = results.entry(verb, output)
    # A watch's history keeps the results at each check as it keeps a page (watches.history).
    ctx.pages_read.append({"url": key, "title": key, "kind": "items", "items": entry["items"]})
    looked = changes.track(pages, key, entry, at=_at(ctx), title=key, scheduled=ctx.scheduled)
    return _said(looked, ctx)


def _said(looked: changes.Looked | None, ctx: TurnContext) -> str | None:
    if looked is None:
        return None
    ctx.diffs.append(changes.data(looked))
    where = answers.host(looked.key) if looked.key.startswith("http") else looked.key
    return f"{where}: {changes.describe(looked)}"
