"""The rule planner: the embedded default, no model. Route → verb calls → a plain answer."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from lookout import errors
from lookout.agent import (
    answers,
    comparing,
    fields,
    judging,
    latest,
    looks,
    reading,
    router,
    setup,
    tools,
    watch_controls,
)
from lookout.agent.context import TurnContext
from lookout.agent.state import ChatState
from lookout.capabilities import registry

CLARIFY = "Just this once, or should I keep watching it for you?"
_DISCOVER = re.compile(
    r"\b(list|map|sitemap|all (the )?pages|every page|pages (of|on)|links (on|of)|discover|crawl)\b"
)
_REVIEWS = re.compile(r"\breviews?\b|\bwhat (do )?people say\b")
_THEIR = re.compile(r"\b(their|each|all|every one of them|them)\b")
REVIEWED_PLACES = 3  # "coffee shops near X and their reviews": the reviews of the first three
_ONCE = re.compile(r"\b(just once|once|only now|just now|one[- ]?(time|off)|no|nope|not now)\b")
_KEEP = re.compile(r"\b(keep|watch|yes|yeah|sure|track|monitor|every|daily|weekly|hourly)\b")
SEARCH_LIMIT = 10
NO_SEARCH = (
    "Web search isn't configured here: send me a link (for example https://example.com) and "
    "I'll read it, or ask whoever runs Lookout to set LOOKOUT_SEARCH_URL to a SearXNG-compatible "
    "search API."
)
_BACK_REFERENCE = re.compile(r"\b(it|this|that|these|those|them|the page|the site|same)\b")


@dataclasses.dataclass
class Reply:
    """What the turn will say and remember."""

    sentences: list[str] = dataclasses.field(default_factory=list)
    pages: dict[str, Any] = dataclasses.field(default_factory=dict)
    pending: dict[str, Any] | None = None
    streamed: bool = False  # the planner already emitted the text parts (token streaming)
    proposal: dict[str, Any] | None = None  # a watch proposed, waiting for "yes" (agent.setup)
    watch: dict[str, Any] | None = None  # the condition's memory between runs (agent.conditions)
    scraped: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def read(text: str, ctx: TurnContext) -> router.Route:
    settings = ctx.services.settings
    return router.route(text, now=ctx.now, min_interval_minutes=settings.min_watch_minutes)


def resolve(
    reply: str, pending: dict[str, Any], ctx: TurnContext
) -> tuple[str, router.Route] | None:
    """The original request, decided by the answer to "once or keep watching?" (None: new topic)."""
    original = str(pending["text"])
    lowered = reply.lower()
    if _KEEP.search(lowered) or read(reply, ctx).intent == "standing":
        return original, read(f"{original}\nKeep watching it. {reply}", ctx)
    if _ONCE.search(lowered):
        return original, read(f"{original}\nJust this once.", ctx)
    return None


def earlier_urls(route: router.Route, state: ChatState, ctx: TurnContext) -> tuple[str, ...]:
    """The pages of the previous question when this one points back at them ("watch it")."""
    if route.urls or route.query or route.place or route.intent in ("control", "ambiguous"):
        return ()
    if not _BACK_REFERENCE.search(state["input"].lower()):
        return ()
    turns = state.get("turns") or []
    return read(str(turns[-1]["text"]), ctx).urls if turns else ()


async def respond(
    state: ChatState, ctx: TurnContext, *, oracle: judging.Oracle | None = None
) -> tuple[str, Reply]:
    """(the question answered, the reply) for this turn's message; `oracle` judges a condition
    in words (the LLM planner's model)."""
    text = state["input"]
    reply = Reply(pages=dict(state.get("pages") or {}), watch=state.get("watch"))
    proposal = state.get("proposal")
    if proposal and not ctx.scheduled:
        answered = await setup.answer(proposal, text, ctx)
        if answered is not None:
            said, reply.proposal, memory = answered
            reply.watch = memory if memory is not None else reply.watch
            reply.sentences.append(said)
            return text, reply
    route = read(text, ctx)
    pending = state.get("pending")
    if pending and (resolved := resolve(text, pending, ctx)):
        text, route = resolved
    elif referred := earlier_urls(route, state, ctx):
        text, route = f"{text} {' '.join(referred)}", read(f"{text} {' '.join(referred)}", ctx)
    if route.intent == "control":
        reply.sentences.append(await control(route, ctx))
    elif route.intent == "ambiguous" and not ctx.scheduled:
        await ctx.emit({"type": "data-clarify", "data": {"question": CLARIFY, "about": text}})
        reply.sentences.append(CLARIFY)
        reply.pending = {"text": text}
    elif route.intent == "standing" and setup.proposable(route) and not ctx.scheduled:
        await propose_watch(text, route, ctx, reply)
    else:
        await gather(route, text, ctx, reply)
        if ctx.scheduled and ctx.condition is not None:
            verdict, reply.watch = await judging.judge(
                text, reply.scraped, state.get("watch"), ctx, oracle
            )
            reply.sentences.insert(0, verdict)
        elif route.intent == "standing" and not ctx.scheduled:
            reply.sentences.append(await start_watch(text, route, ctx))
    return text, reply


async def propose_watch(text: str, route: router.Route, ctx: TurnContext, reply: Reply) -> None:
    """Read the page once and propose the watch (sample → propose; agent.setup)."""
    await scrape(list(route.urls), text, ctx, reply, structured=True)
    page = reply.scraped[0] if reply.scraped else None
    proposed = setup.propose(text, route, page, ctx)
    await ctx.emit({"type": "data-watch-proposal", "data": proposed.part})
    reply.sentences = [proposed.sentence]
    reply.proposal = proposed.kept


async def control(route: router.Route, ctx: TurnContext) -> str:
    if ctx.watches is None:
        return "Watching isn't available in this conversation."
    if route.control in watch_controls.HANDLED:
        return await watch_controls.run(route, ctx)
    if route.control == "stop_watch":
        stopped = await ctx.watches.stop()
        return (
            "I've stopped watching. This is a normal chat again."
            if stopped
            else ("This chat isn't being watched.")
        )
    refreshed = await ctx.watches.refresh()
    if refreshed and refreshed.get("enabled") is False:
        return "This watch is paused, so I didn't run it. Say “resume watching” to start it again."
    return (
        "Running the check now; the result will appear here."
        if refreshed
        else ("This chat isn't being watched, so there is nothing to run. Ask me to watch a page.")
    )


async def start_watch(text: str, route: router.Route, ctx: TurnContext) -> str:
    if ctx.watches is None:
        return "Watching isn't available in this conversation, so I answered just this once."
    assert route.cadence is not None
    try:
        summary = await ctx.watches.start(text, route.cadence, timezone=route.timezone)
    except errors.LookoutError as exc:
        return f"I couldn't start watching: {exc.message}"
    return str(summary["sentence"])


async def gather(route: router.Route, text: str, ctx: TurnContext, reply: Reply) -> None:
    lowered = text.lower()
    if route.urls:
        if latest.asks(lowered) and len(route.urls) == 1:
            reply.sentences.append(await latest.read(route.urls[0], ctx))
        elif _DISCOVER.search(lowered):
            await discover_site(route.urls[0], ctx, reply)
        else:
            structured = ctx.condition is not None or fields.wants_data(text)
            await scrape(list(route.urls), text, ctx, reply, structured=structured)
    elif route.query or route.place:
        await maps(route, lowered, ctx, reply)
    else:
        await search(text, ctx, reply)


async def scrape(
    urls: list[str], question: str, ctx: TurnContext, reply: Reply, *, structured: bool = False
) -> None:
    verb, arguments = registry.asked(
        registry.Ask(registry.READ, urls=tuple(urls), structured=structured)
    )
    arguments = looks.keep_rendering(verb, arguments, reply.pages)
    call = await tools.call(ctx, verb.name, arguments)
    if call.output is None:
        reply.sentences.append(_unfinished(call))
        return
    pages = call.output["pages"]
    reply.scraped = list(pages)
    said = [looks.page(page, ctx, reply.pages) for page in pages if not page.get("error")]
    if ctx.scheduled and said and len(said) == len(pages) and all(said):
        # Every page compared with its last look: the run says what changed, not the page
        # again (its snapshot is in the checkpoint, its reading in the first run's answer).
        reply.sentences += [s for s in said if s]
        return
    if len(pages) > 1:
        reply.sentences.append(comparing.compare(pages))
    elif pages[0].get("error"):
        reply.sentences.append(answers.page_error(pages[0]))
    else:
        reply.sentences.append(
            await reading.answer_in_reader(question, pages[0], ctx.services.settings)
        )
    reply.sentences = [s for s in reply.sentences + said if s]


async def discover_site(url: str, ctx: TurnContext, reply: Reply) -> None:
    call = await tools.ask(ctx, registry.Ask(registry.MAP, urls=(url,), limit=100))
    reply.sentences.append(
        answers.links(call.output, answers.host(url)) if call.output else _unfinished(call)
    )
    _found(call, ctx, reply)


def _found(call: tools.Call, ctx: TurnContext, reply: Reply) -> None:
    """What changed in these results since the chat's last look, when it looked before."""
    if call.output is not None and (
        said := looks.found(call.verb, call.input, call.output, ctx, reply.pages)
    ):
        reply.sentences.append(said)


async def maps(route: router.Route, lowered: str, ctx: TurnContext, reply: Reply) -> None:
    query = str(route.place or route.query)
    asked = registry.Ask(registry.PLACES, query=query, near=route.location or None, limit=5)
    if not _REVIEWS.search(lowered):
        call = await tools.ask(ctx, asked)
        reply.sentences.append(
            answers.places(call.output, query) if call.output else _unfinished(call)
        )
        _found(call, ctx, reply)
        return
    several = route.place is None and _THEIR.search(lowered) is not None
    found = await tools.ask(ctx, dataclasses.replace(asked, limit=5 if several else 1))
    places = (found.output or {}).get("places") or []
    if not places:
        reply.sentences.append(
            answers.places(found.output, query) if found.output else _unfinished(found)
        )
        return
    if several and found.output is not None:
        reply.sentences.append(answers.places(found.output, query))
    for place in places[: REVIEWED_PLACES if several else 1]:
        asked_reviews = registry.Ask(registry.REVIEWS, ref=place["place_ref"], limit=10)
        call = await tools.ask(ctx, asked_reviews)
        reply.sentences.append(answers.reviews(call.output) if call.output else _unfinished(call))


async def search(text: str, ctx: TurnContext, reply: Reply) -> None:
    call = await tools.ask(ctx, registry.Ask(registry.SEARCH, query=text[:200], limit=SEARCH_LIMIT))
    if isinstance(call.error, errors.ProviderNotConfigured):
        reply.sentences.append(NO_SEARCH)
        return
    reply.sentences.append(
        answers.links(call.output, f"“{text[:80]}”") if call.output else _unfinished(call)
    )
    _found(call, ctx, reply)


def _unfinished(call: tools.Call) -> str:
    if call.error is not None:
        return answers.failure(call)
    return (
        f"This is taking a while; it goes on as job {call.job_id}, and I'll post the result "
        "here when it is done."
    )
