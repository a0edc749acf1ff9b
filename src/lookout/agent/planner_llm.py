"""The LLM planner: any OpenAI-compatible chat model, with the verbs, the watch tools and the
workspace's MCP connector tools as tools, and the router's rules and decision in its prompt.

model → tool calls → results → model, for at most MAX_ROUNDS rounds; tokens stream to the chat
as text parts. What the model reads is untrusted (llm_guard): it is offered only the tools the
router's reading of the user's message needs (llm_tools.for_turn), tool results come back fenced
as data, and the turn stops, saying so, when its verb calls reach the credit budget.

The state written back is what the rule planner writes (turns, page snapshots,
the pending "once or keep watching?"), so either planner can pick up a chat. The endpoint
failing (refused, 5xx, timeout) is a sentence in the answer, never a failed turn.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from lookout import parts
from lookout.agent import llm_guard, llm_prompt, llm_tools, planner_rules, router, setup
from lookout.agent.context import TurnContext
from lookout.agent.state import ChatState
from lookout.settings import Settings

if TYPE_CHECKING:  # LangChain loads with the first turn (agent.graph.OnDemand), httpx with a model
    import httpx
    from langchain_core.messages import AIMessageChunk, BaseMessage
    from langchain_core.runnables import Runnable
    from langchain_openai import ChatOpenAI

    Model = Runnable[Any, BaseMessage]

logger = logging.getLogger(__name__)

MAX_ROUNDS = 6
JUDGE_CHARS = 8_000  # of the page handed to the model to judge a condition in words
MAX_CALLS_PER_ROUND = 8
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
# A local endpoint (Ollama, vLLM, llama.cpp) needs no key, but the client insists on one.
NO_KEY = "not-needed"
READ_TIMEOUT_S = 60.0  # between two streamed chunks
CONNECT_TIMEOUT_S = 10.0
MAX_RETRIES = 1


def enabled(settings: Settings) -> bool:
    """The LLM planner answers when an endpoint (or an OpenAI key) is configured."""
    return bool(settings.llm_base_url or settings.openai_api_key)


def _endpoint_errors() -> tuple[type[Exception], ...]:
    """What a failing endpoint raises (an `except` evaluates this only when something was)."""
    import httpx
    import openai  # the LLM client loads only when a model is used (bench/footprint.py)

    return (openai.OpenAIError, httpx.HTTPError)


def _timeout() -> httpx.Timeout:
    import httpx

    return httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)


def _client() -> httpx.AsyncClient:
    import httpx

    return httpx.AsyncClient(timeout=_timeout())


def chat_model(settings: Settings, http: httpx.AsyncClient) -> ChatOpenAI:
    from langchain_openai import ChatOpenAI  # only when a model is used, as openai above
    from pydantic import SecretStr

    key = settings.llm_api_key or settings.openai_api_key or NO_KEY
    return ChatOpenAI(
        model=settings.llm_model or DEFAULT_MODEL,
        base_url=settings.llm_base_url or DEFAULT_BASE_URL,
        api_key=SecretStr(key),
        streaming=True,
        timeout=_timeout(),
        max_retries=MAX_RETRIES,
        http_async_client=http,
    )


async def respond(current: ChatState, ctx: TurnContext) -> tuple[str, planner_rules.Reply]:
    """(the question answered, the reply) for this turn's message; the text is already streamed."""
    message = current["input"]
    question, route = message, planner_rules.read(message, ctx)
    if _rules_decide(current, route, ctx):
        return await planner_rules.respond(current, ctx, oracle=judge_condition)
    pending = current.get("pending")
    original = None
    if pending and (resolved := planner_rules.resolve(message, pending, ctx)):
        question, route = resolved
        original = question
    reply = planner_rules.Reply(
        pages=dict(current.get("pages") or {}),
        streamed=True,
        watch=current.get("watch"),
        proposal=current.get("proposal"),
    )
    toolset = await llm_tools.for_turn(ctx, route, question)
    history = llm_prompt.messages(current, ctx, message, route, original)
    said, called = await converse(ctx, toolset, history, reply)
    reply.sentences.append(said)
    if (extra := await _router_guarantee(route, question, called, ctx)) is not None:
        await say(ctx, extra)
        reply.sentences.append(extra)
    if route.intent == "ambiguous" and not ctx.scheduled and not called:
        reply.pending = {"text": question}
        if planner_rules.CLARIFY in said:
            await ctx.emit(
                parts.data("clarify", {"question": planner_rules.CLARIFY, "about": question})
            )
    reply.sentences = [sentence for sentence in reply.sentences if sentence]
    return question, reply


def _rules_decide(current: ChatState, route: router.Route, ctx: TurnContext) -> bool:
    """The setup flow (a proposal open, or to be made) and a run judging its condition follow
    the router's rules exactly; the model is asked only to judge a condition in words."""
    if ctx.scheduled:
        return ctx.condition is not None
    return bool(current.get("proposal")) or (route.intent == "standing" and setup.proposable(route))


async def judge_condition(ctx: TurnContext, condition: str, page: str) -> bool | None:
    """The model's yes / no on whether `condition` (in words) holds for the page (None: unsure
    or the endpoint failed)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    prompt = (f"Condition: {condition[:300]}\n\nPage:\n{page[:JUDGE_CHARS]}\n\n"
              "Is the condition true of this page now? Answer only yes or no.")  # fmt: skip
    try:
        async with _client() as http:
            answer = await chat_model(ctx.services.settings, http).ainvoke(
                [SystemMessage("You judge web pages. Answer only yes or no."), HumanMessage(prompt)]
            )
    except _endpoint_errors() as exc:
        logger.warning("LLM endpoint failed judging a condition: %r", exc)
        return None
    said = answer.text.strip().lower()
    return True if said.startswith("yes") else False if said.startswith("no") else None


async def converse(
    ctx: TurnContext,
    toolset: llm_tools.Toolset,
    history: list[BaseMessage],
    reply: planner_rules.Reply,
) -> tuple[str, set[str]]:
    """Run the model/tool loop; returns (all text the model said, names of the tools called)."""
    said: list[str] = []
    called: set[str] = set()
    async with _client() as http:
        model = chat_model(ctx.services.settings, http)
        try:
            for round_ in range(MAX_ROUNDS):
                # The last round offers no tools, so the model has to answer in words.
                last = round_ == MAX_ROUNDS - 1 or not toolset.specs
                bound: Model = model if last else model.bind_tools(toolset.specs)
                answer = await stream(ctx, bound, history)
                said.append(answer.text)
                history.append(answer)
                if last or not (answer.tool_calls or answer.invalid_tool_calls):
                    break
                history += await run_calls(ctx, toolset, answer, reply, called)
                if toolset.budget.exhausted:
                    said.append(await _out_of_budget(ctx, toolset.budget))
                    break
        except _endpoint_errors() as exc:
            sentence = failure(exc, ctx.services.settings)
            logger.warning("LLM endpoint failed: %r", exc, extra={"turn_id": ctx.turn_id})
            await ctx.emit(parts.data("notice", {"code": "upstream_error", "message": sentence}))
            await say(ctx, sentence)
            said.append(sentence)
    return "\n\n".join(text for text in said if text), called


async def stream(ctx: TurnContext, model: Model, history: list[BaseMessage]) -> AIMessageChunk:
    """One model call; its tokens go out as one text part (opened on the first token)."""
    from langchain_core.messages import AIMessageChunk

    text_id: str | None = None
    full = AIMessageChunk(content="")
    try:
        async for chunk in model.astream(history):
            if not isinstance(chunk, AIMessageChunk):
                continue
            full = full + chunk
            delta = chunk.text
            if not delta:
                continue
            if text_id is None:
                text_id = f"text_{uuid.uuid4().hex[:12]}"
                await ctx.emit(parts.text_start(text_id))
            await ctx.emit(parts.text_delta(text_id, delta))
    finally:
        if text_id is not None:
            await ctx.emit(parts.text_end(text_id))
    return full


async def run_calls(
    ctx: TurnContext,
    toolset: llm_tools.Toolset,
    answer: AIMessageChunk,
    reply: planner_rules.Reply,
    called: set[str],
) -> list[BaseMessage]:
    """A result for every call the model asked for (the API requires one per call id)."""
    from langchain_core.messages import ToolMessage

    results: list[BaseMessage] = []
    for index, call in enumerate(answer.tool_calls):
        call_id = str(call.get("id") or "")
        if index >= MAX_CALLS_PER_ROUND or toolset.budget.exhausted:
            skipped = (
                "Skipped: this answer's credit budget is spent."
                if toolset.budget.exhausted
                else f"Skipped: at most {MAX_CALLS_PER_ROUND} tool calls at a time."
            )
            results.append(ToolMessage(skipped, tool_call_id=call_id))
            continue
        called.add(call["name"])
        output = await llm_tools.run(ctx, toolset, call["name"], dict(call["args"]), reply.pages)
        results.append(ToolMessage(output, tool_call_id=call_id))
    for invalid in answer.invalid_tool_calls:
        problem = f"The arguments of {invalid.get('name')} were not valid JSON; try again."
        results.append(ToolMessage(problem, tool_call_id=str(invalid.get("id") or "")))
    return results


async def _out_of_budget(ctx: TurnContext, budget: llm_guard.Budget) -> str:
    """The turn ends here: a notice a client can show, and the sentence in the answer."""
    sentence = budget.sentence()
    notice = {"code": "budget_exhausted", "message": sentence, "limit": budget.limit}
    await ctx.emit(parts.data("notice", notice))
    await say(ctx, sentence)
    return sentence


async def _router_guarantee(
    route: router.Route, question: str, called: set[str], ctx: TurnContext
) -> str | None:
    """What the router decided and the model left undone: a standing request always becomes a
    watch, a control request always reaches its tool (the rule planner's sentences)."""
    if ctx.watches is None or ctx.scheduled:
        return None
    if route.intent == "standing" and "start_watch" not in called:
        return await planner_rules.start_watch(question, route, ctx)
    if route.intent == "control" and route.control not in called:
        return await planner_rules.control(route, ctx)
    return None


async def say(ctx: TurnContext, text: str) -> None:
    text_id = f"text_{uuid.uuid4().hex[:12]}"
    await ctx.emit(parts.text_start(text_id))
    await ctx.emit(parts.text_delta(text_id, text))
    await ctx.emit(parts.text_end(text_id))


def failure(exc: Exception, settings: Settings) -> str:
    """The endpoint's failure as a sentence a person can act on (never the raw exception)."""
    import httpx
    import openai  # loaded already: the model failed

    where = httpx.URL(settings.llm_base_url or DEFAULT_BASE_URL).host
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        problem = "it took too long to answer"
    elif isinstance(exc, openai.APIConnectionError | httpx.TransportError):
        problem = "it could not be reached"
    elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        problem = "it refused our API key (check LOOKOUT_LLM_API_KEY)"
    elif isinstance(exc, openai.APIStatusError):
        problem = f"it answered with an error (HTTP {exc.status_code})"
    else:
        problem = "its answer could not be read"
    return (
        f"I couldn't finish this answer: the language model at {where} failed ({problem}). "
        "Try again in a moment."
    )
