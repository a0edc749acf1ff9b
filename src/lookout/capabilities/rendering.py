"""Whether a scraped page is rendered in the browser, and the rendered page in its place.

`render: "auto"` keeps the plain fetch unless its HTML is a JavaScript shell: little text outside
scripts, with a root `<div id="app|root|__next|__nuxt">` or a `<noscript>` asking for JavaScript.
A call that needs the browser in a process without one (the web process) raises
`registry.NeedsWorker`: the adapter runs it as a job, in a worker.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from typing import Any

from lookout import errors
from lookout.capabilities import browser, fetch, registry

# A shell carries less readable text than this (characters, outside scripts and styles).
SHELL_TEXT = 200
# Pages bigger than this are not shells, whatever their markup: no need to look.
_SHELL_MAX_BYTES = 256 * 1024
# The page is untrusted and read on the event loop: every pattern runs in linear time. A run
# that could fail far on (a tag never closed) stops at the next "<", or an unclosed tag, script
# or style runs to the end of the page, as a browser reads it. (`<[^>]*>` tried every "<" to the
# end of the page: 256 KB of "<" held the loop for ~36 s; "<script" repeated, ~47 s.)
_ROOT = re.compile(rb"<div[^<>]+id\s*=\s*[\"']?(app|root|__next|__nuxt)\b", re.I)
_NOSCRIPT = re.compile(rb"<noscript[^<>]*>[^<]{0,400}javascript", re.I)
_INVISIBLE = re.compile(rb"<(script|style|noscript|template)\b.*?(?:</\1\s*>|\Z)", re.I | re.S)
_TAG = re.compile(rb"<[^>]*+(?:>|\Z)")
# Units of a rendered page (a plain page is 1): a browser costs several plain fetches of CPU.
RENDERED_UNITS = 3


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The fetch result to read (the rendered HTML when rendered) and the page's extra fields."""

    result: fetch.FetchResult
    fields: dict[str, Any]


def looks_like_shell(body: bytes) -> bool:
    """Whether `body` is an HTML page that builds its content with JavaScript."""
    if len(body) > _SHELL_MAX_BYTES:
        return False
    if not (_ROOT.search(body) or _NOSCRIPT.search(body)):
        return False
    visible = _TAG.sub(b" ", _INVISIBLE.sub(b" ", body))
    return len(b" ".join(visible.split())) < SHELL_TEXT


def wanted(options: dict[str, Any], result: fetch.FetchResult) -> bool:
    """Whether this fetched page is to be rendered."""
    if result.content_type not in fetch.HTML_TYPES:
        return False
    if options["render"] == "always" or "screenshot" in options["formats"]:
        return True
    return options["render"] == "auto" and looks_like_shell(result.body)


async def prepare(
    result: fetch.FetchResult, options: dict[str, Any], ctx: registry.VerbContext
) -> Outcome:
    """`result` as fetched, or rendered in the browser when `wanted`; raises FetchFailed,
    ProviderNotConfigured, NeedsWorker, or InsufficientCredits (an auto page whose rendered
    price could not be reserved: it is never rendered unpaid)."""
    plain = Outcome(result, {"rendered": False} | _no_shot(options))
    if not wanted(options, result):
        return plain
    pool = ctx.browser
    forced = options["render"] == "always" or "screenshot" in options["formats"]
    if ctx.settings.browser == "off" or (pool is not None and not pool.available):
        if forced:
            raise browser.not_configured(ctx.settings)
        return plain  # auto without a browser: the shell is what there is
    extra = 0 if forced else RENDERED_UNITS - 1  # auto reserved a plain page's 1 unit
    if pool is None:
        raise registry.NeedsWorker("rendering needs a worker's browser", extra_units=extra)
    if extra and ctx.top_up is not None:
        await ctx.top_up(extra)  # InsufficientCredits: this page is not rendered
    mode = options.get("screenshot", "viewport") if "screenshot" in options["formats"] else None
    page = await pool.render(result.final_url, wait_for=options.get("wait_for"), screenshot=mode)
    rendered = dataclasses.replace(
        result,
        final_url=page.final_url,
        body=page.html.encode(),
        content_type="text/html",
        charset="utf-8",
    )
    fields: dict[str, Any] = {"rendered": True} | _no_shot(options)
    if page.screenshot is not None:
        fields["screenshot"] = await _save(page.screenshot, result.url, ctx)
    return Outcome(rendered, fields)


def _no_shot(options: dict[str, Any]) -> dict[str, Any]:
    return {"screenshot": None} if "screenshot" in options["formats"] else {}


async def _save(png: bytes, url: str, ctx: registry.VerbContext) -> dict[str, Any]:
    if ctx.save_artifact is None:
        raise registry.NeedsWorker("a screenshot is kept as a job's artifact")
    width, height = png_size(png)
    saved = await ctx.save_artifact("image/png", png)
    shape = {"width": width, "height": height, "bytes": len(png), "content_type": "image/png"}
    return saved | shape


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 24:
        raise errors.FetchFailed("the browser produced a screenshot that is not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def units(page: dict[str, Any]) -> int:
    """Billable units of one page of output: 0 failed, 1 plain, RENDERED_UNITS rendered."""
    if page.get("error") is not None:
        return 0
    return RENDERED_UNITS if page.get("rendered") else 1


def max_units(options: dict[str, Any]) -> int:
    """Per page: RENDERED_UNITS when rendering is asked for; `auto` reserves 1, and a page
    found to need the browser tops its reservation up to RENDERED_UNITS before it renders."""
    forced = options.get("render") == "always" or "screenshot" in options.get("formats", ())
    return RENDERED_UNITS if forced else 1
