"""The LLM planner's tools: the verbs, the chat's watch tools and the workspace's MCP connector
tools, as OpenAI function specs; and one call run to a bounded, fenced text the model reads back.

A turn offers only what the router's reading of the user's own message needs (page content
never reaches the router): an ambiguous message gets no tools (it is answered with a question),
a control request only the watch tool it names, a one-shot read the verbs and no watch tool; a
standing request adds start_watch. Connector tools come from connectors marked for chat use,
read-only ones only in scheduled turns (which never get watch tools). A call of a tool not
offered is refused, whatever the model says; verb calls stop at the turn's credit budget.

Verb calls go through `agent.tools.call` (the one adapter: metered, tool parts, slow-verb jobs);
watch and connector calls emit the same tool parts so a client shows every call alike.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Awaitable
from typing import Any

from lookout import errors, parts
from lookout.agent import (
    llm_guard,
    llm_watch,
    looks,
    passages,
    router,
    tools,
)
from lookout.agent.context import TurnContext
from lookout.capabilities import registry
from lookout.mcp import toolbox

RESULT_CHARS = 12_000  # what one tool result may cost the model's context
PAGE_CHARS = 4_000  # markdown of one scraped page handed to the model
PAGE_LINKS = 20
DESCRIPTION_CHARS = 1_000
FIRST_LOOK = "First look at this page in this chat: nothing to compare with yet."
WATCH_TOOLS = llm_watch.NAMES


@dataclasses.dataclass(frozen=True)
class Toolset:
    """What the model may call in this turn, and the credits its verb calls may still take."""

    specs: list[dict[str, Any]]
    verbs: dict[str, str]  # tool name -> verb name
    connectors: list[toolbox.ConnectorTool]
    watches: tuple[str, ...]  # the watch tools offered
    budget: llm_guard.Budget
    # What start_watch watches: the user's question and the router's cadence, never the
    # model's words (a page could otherwise choose what a watch re-asks, and how often).
    standing: tuple[str, str, str] | None = None  # (question, cron, timezone)


def _spec(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description[:DESCRIPTION_CHARS],
            "parameters": parameters,
        },
    }


async def for_turn(ctx: TurnContext, route: router.Route, question: str) -> Toolset:
    """The tools `route` (the router's reading of the user's `question`) needs; see the
    module."""
    budget = llm_guard.Budget(ctx.services.settings.llm_turn_credits)
    reads = ctx.scheduled or route.intent in ("one_shot", "standing")
    verbs = registry.all_verbs() if reads else []
    specs = [
        _spec(tools.tool_name(verb.name), f"{verb.title}. {verb.description}", _schema(verb))
        for verb in verbs
    ]
    watches = watch_tools(route, ctx)
    specs += [_spec(name, *llm_watch.SPECS[name]) for name in watches]
    connectors = (
        await toolbox.tools_for(ctx.services, ctx.principal, read_only=ctx.scheduled)
        if reads
        else []
    )
    specs += [
        _spec(tool.qualified_name, f"[{tool.connector_name}] {tool.description}", tool.input_schema)
        for tool in connectors
    ]
    by_name = {tools.tool_name(verb.name): verb.name for verb in verbs}
    standing = (
        (question, route.cadence, route.timezone)
        if "start_watch" in watches and route.cadence
        else None
    )
    return Toolset(specs, by_name, connectors, watches, budget, standing)


def watch_tools(route: router.Route, ctx: TurnContext) -> tuple[str, ...]:
    """The watch tools the user's own message asked for: start_watch for a standing request,
    the named one for a control request; none in a scheduled turn (ctx.watches is None)."""
    if ctx.watches is None or ctx.scheduled:
        return ()
    if route.intent == "standing":
        return ("start_watch",)
    if route.intent == "control" and route.control in WATCH_TOOLS:
        return (route.control,)
    return ()


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
    """Run one tool call; returns what the model reads (bounded, fenced). `pages` gets new
    snapshots. A verb call past the budget is not run (and marks the budget exhausted)."""
    if name in toolset.verbs:
        if not toolset.budget.admit(toolset.verbs[name], arguments):
            return f"Not run: {toolset.budget.sentence()}"
        result = await _verb(ctx, toolset.verbs[name], arguments, pages)
        return llm_guard.fence(name, llm_guard.PAGE, bounded(result))
    if name in toolset.watches:
        if name == "start_watch" and toolset.standing is not None:
            # The user's question, cadence and zone, whatever the model passed: only the
            # condition is the model's (a page could otherwise pick what is re-asked, how often).
            question, cron, zone = toolset.standing
            arguments = {**arguments, "question": question, "cadence": cron, "timezone": zone}
        result = await _shown(ctx, name, arguments, llm_watch.run(ctx, name, arguments))
        return llm_guard.fence(name, llm_guard.LOOKOUT, bounded(result))
    if (connector := toolbox.find(toolset.connectors, name)) is not None:
        result = await _shown(ctx, name, arguments, _connector(ctx, connector, arguments))
        source = llm_guard.CONNECTOR.format(name=connector.connector_name)
        return llm_guard.fence(name, source, bounded(result))
    return bounded({"error": {"code": "not_found", "message": f"No tool {name!r} is offered."}})


def bounded(result: Any) -> str:
    """JSON for the model, cut to RESULT_CHARS with a note saying how much was left out."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) <= RESULT_CHARS:
        return text
    return text[:RESULT_CHARS] + f" … [cut: {len(text) - RESULT_CHARS} more characters]"


async def _verb(
    ctx: TurnContext, verb: str, arguments: dict[str, Any], pages: dict[str, Any]
) -> dict[str, Any]:
    # A page that needed a browser keeps getting one, unless the model said how to render.
    arguments = looks.keep_rendering(registry.get(verb), arguments, pages)
    call = await tools.call(ctx, verb, arguments)
    if call.error is not None:
        return {"error": {"code": call.error.code, "message": call.error.message}}
    if call.output is None:
        return {
            "status": "running",
            "job_id": call.job_id,
            "note": "Still running as a job; its result will be kept under this job id.",
        }
    reads_as = registry.reads_as(verb)
    if reads_as == "pages":
        return {"pages": [_page(page, ctx, pages) for page in call.output.get("pages") or []]}
    if reads_as in registry.ITEM_LISTS:
        said = looks.found(verb, arguments, call.output, ctx, pages)
        return {**call.output, "what_changed": said or FIRST_LOOK}
    return call.output


def _page(page: dict[str, Any], ctx: TurnContext, pages: dict[str, Any]) -> dict[str, Any]:
    """A scraped page as the model sees it: main text cut, links capped, what changed added."""
    if page.get("error"):
        return {"url": page["url"], "error": page["error"]}
    shown = {key: page.get(key) for key in ("url", "final_url", "status", "title")}
    markdown = page.get("markdown")
    if markdown is not None:
        # The passages that best match the question first, not the page's first characters.
        url = str(page["url"])
        shown["markdown"] = passages.for_model(ctx.question, markdown, url=url, limit=PAGE_CHARS)
        shown["what_changed"] = looks.page(page, ctx, pages) or FIRST_LOOK
    elif page.get("text") is not None:
        shown["text"] = _cut(str(page["text"]), PAGE_CHARS)
    if page.get("links"):
        shown["links"] = list(page["links"])[:PAGE_LINKS]
    return shown


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [cut: {len(text) - limit} more characters of this page]"


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
