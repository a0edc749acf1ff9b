"""The LLM planner's tools: the verbs, the chat's watch tools and the workspace's MCP connector
tools, as OpenAI function specs; and one call run to a bounded text the model reads back.

Verb calls go through `agent.tools.call` (the one adapter: metered, tool parts, slow-verb jobs);
watch and connector calls emit the same tool parts so a client shows every call alike.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Awaitable
from typing import Any

from lookout import errors
from lookout.agent import changes, llm_watch, tools
from lookout.agent.context import TurnContext
from lookout.capabilities import registry
from lookout.chat import parts
from lookout.mcp import toolbox

RESULT_CHARS = 12_000  # what one tool result may cost the model's context
PAGE_CHARS = 4_000  # markdown of one scraped page handed to the model
PAGE_LINKS = 20
DESCRIPTION_CHARS = 1_000
WATCH_TOOLS = llm_watch.NAMES


@dataclasses.dataclass(frozen=True)
class Toolset:
    """What the model may call in this turn."""

    specs: list[dict[str, Any]]
    verbs: dict[str, str]  # tool name -> verb name
    connectors: list[toolbox.ConnectorTool]
    watches: bool


def _spec(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description[:DESCRIPTION_CHARS],
            "parameters": parameters,
        },
    }


async def for_turn(ctx: TurnContext) -> Toolset:
    """Every verb, the watch tools unless watching is off (scheduled turns), and connectors."""
    verbs = {tools.tool_name(verb.name): verb.name for verb in registry.all_verbs()}
    specs = [
        _spec(tools.tool_name(verb.name), f"{verb.title}. {verb.description}", _schema(verb))
        for verb in registry.all_verbs()
    ]
    if ctx.watches is not None:
        specs += [_spec(name, *llm_watch.SPECS[name]) for name in WATCH_TOOLS]
    connectors = await toolbox.tools_for(ctx.services, ctx.principal)
    specs += [
        _spec(tool.qualified_name, f"[{tool.connector_name}] {tool.description}", tool.input_schema)
        for tool in connectors
    ]
    return Toolset(specs, verbs, connectors, ctx.watches is not None)


def _schema(verb: registry.Verb) -> dict[str, Any]:
    schema = registry.input_json_schema(verb)
    schema.setdefault("type", "object")
    return schema


async def run(
    ctx: TurnContext,
    toolset: Toolset,
    name: str,
    arguments: dict[str, Any],
    pages: dict[str, Any],
) -> str:
    """Run one tool call; returns what the model reads (bounded). `pages` gets new snapshots."""
    if name in toolset.verbs:
        result = await _verb(ctx, toolset.verbs[name], arguments, pages)
    elif name in WATCH_TOOLS and toolset.watches:
        result = await _shown(ctx, name, arguments, llm_watch.run(ctx, name, arguments))
    elif (connector := toolbox.find(toolset.connectors, name)) is not None:
        result = await _shown(ctx, name, arguments, _connector(ctx, connector, arguments))
    else:
        result = {"error": {"code": "not_found", "message": f"There is no tool named {name!r}."}}
    return bounded(result)


def bounded(result: Any) -> str:
    """JSON for the model, cut to RESULT_CHARS with a note saying how much was left out."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) <= RESULT_CHARS:
        return text
    return text[:RESULT_CHARS] + f" … [cut: {len(text) - RESULT_CHARS} more characters]"


async def _verb(
    ctx: TurnContext, verb: str, arguments: dict[str, Any], pages: dict[str, Any]
) -> dict[str, Any]:
    call = await tools.call(ctx, verb, arguments)
    if call.error is not None:
        return {"error": {"code": call.error.code, "message": call.error.message}}
    if call.output is None:
        return {
            "status": "running",
            "job_id": call.job_id,
            "note": "Still running as a job; its result will be kept under this job id.",
        }
    if verb == "web.scrape":
        return {"pages": [_page(page, ctx, pages) for page in call.output.get("pages") or []]}
    return call.output


def _page(page: dict[str, Any], ctx: TurnContext, pages: dict[str, Any]) -> dict[str, Any]:
    """A scraped page as the model sees it: main text cut, links capped, what changed added."""
    if page.get("error"):
        return {"url": page["url"], "error": page["error"]}
    shown = {key: page.get(key) for key in ("url", "final_url", "status", "title")}
    markdown = page.get("markdown")
    if markdown is not None:
        shown["markdown"] = _cut(markdown, PAGE_CHARS)
        shown["what_changed"] = _what_changed(page, markdown, ctx, pages)
    elif page.get("text") is not None:
        shown["text"] = _cut(str(page["text"]), PAGE_CHARS)
    if page.get("links"):
        shown["links"] = list(page["links"])[:PAGE_LINKS]
    return shown


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [cut: {len(text) - limit} more characters of this page]"


def _what_changed(
    page: dict[str, Any], markdown: str, ctx: TurnContext, pages: dict[str, Any]
) -> str:
    """Compare with the chat's last snapshot of the page (as the rule planner does)."""
    prior = pages.get(page["url"])
    lines, version, source = changes.observe(markdown, prior)
    at = ctx.now.strftime("%Y-%m-%d %H:%M UTC")
    changes.remember(pages, page["url"], at, page.get("title") or "", lines, version, source)
    if prior is None:
        return "First look at this page in this chat: nothing to compare with yet."
    same = changes.page_digest(prior) == version
    diff = changes.Diff([], []) if same else changes.diff(list(prior["lines"]), lines)
    return changes.describe(diff, str(prior["at"]))


async def _shown(
    ctx: TurnContext, name: str, arguments: dict[str, Any], work: Awaitable[dict[str, Any]]
) -> dict[str, Any]:
    """Await `work` between the tool parts a client shows for a call."""
    call_id = f"call_{uuid.uuid4().hex[:16]}"
    await ctx.emit(parts.tool_input(call_id, name, arguments))
    output = await work
    await ctx.emit(parts.tool_output(call_id, output))
    return output


async def _connector(
    ctx: TurnContext, tool: toolbox.ConnectorTool, arguments: dict[str, Any]
) -> dict[str, Any]:
    try:
        result = await toolbox.call(ctx.services, ctx.principal, tool, arguments)
    except errors.LookoutError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    return {"text": result.text, "is_error": result.is_error}
