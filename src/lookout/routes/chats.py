"""Chats over REST and SSE: CRUD, messages, a turn's stream, resume, and the live tail."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import marshmallow
from aiohttp import web
from aiohttp_sse import EventSourceResponse, sse_response

from lookout import appkeys, errors, parts
from lookout.access.principals import Principal
from lookout.chat import chats, events, stream_ids, turns
from lookout.ops import shutdown
from lookout.routes import authn, common
from lookout.schema import chats as schema
from lookout.watches import service, tools, workspace

logger = logging.getLogger(__name__)

MAX_CURSOR = 2**62  # a bigint column's range, with room: beyond it the driver refused (500)
STREAM_HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "Cache-Control": "no-cache"}
PING_S = 15


def _chat_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["chat_id"])
    except ValueError:
        raise errors.NotFound("No such chat in this workspace.") from None


def _load(schema_cls: type[marshmallow.Schema], body: Any) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = schema_cls().load(body)
    except marshmallow.ValidationError as exc:
        fields = exc.normalized_messages()  # type: ignore[no-untyped-call]
        raise errors.InvalidInput("The request body is not valid.", fields=fields) from None
    return loaded


async def create_chat(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    body = _load(schema.NewChat, await common.json_body(request))
    chat = await chats.create(request.app[appkeys.DB], principal, body["title"])
    return common.ok(request, chats.view(chat), status=201)


async def list_chats(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    limit, offset = _page(request, "offset")
    found = await _watched_views(request, principal, limit, offset)
    return common.ok(request, {"chats": found, "offset": offset, "limit": limit})


async def _watched_views(
    request: web.Request, principal: Principal, limit: int, offset: int
) -> list[dict[str, Any]]:
    db = request.app[appkeys.DB]
    found = await chats.list_page(db, principal, limit=limit, offset=offset)
    summaries = await service.summaries(db, principal.workspace_id, [c.id for c in found])
    return [chats.view(chat, summaries.get(chat.id)) for chat in found]


def _page(request: web.Request, cursor: str) -> tuple[int, int]:
    try:
        limit = int(request.query.get("limit", "50"))
        start = int(request.query.get(cursor, "0"))
    except ValueError:
        raise errors.InvalidInput(f"limit and {cursor} are whole numbers.") from None
    if not 1 <= limit <= chats.MAX_PAGE or not 0 <= start <= MAX_CURSOR:
        raise errors.InvalidInput(f"limit is 1 to {chats.MAX_PAGE}; {cursor} is 0 to {MAX_CURSOR}.")
    return limit, start


async def get_chat(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    db = request.app[appkeys.DB]
    chat = await chats.get(db, principal, _chat_id(request))
    summaries = await service.summaries(db, principal.workspace_id, [chat.id])
    return common.ok(request, chats.view(chat, summaries.get(chat.id)))


async def rename_chat(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    body = _load(schema.Rename, await common.json_body(request))
    chat = await chats.rename(request.app[appkeys.DB], principal, _chat_id(request), body["title"])
    return common.ok(request, chats.view(chat))


async def delete_chat(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    chat_id = _chat_id(request)
    await chats.delete(
        request.app[appkeys.DB], request.app[appkeys.AGENT].saver, principal, chat_id
    )
    return common.ok(request, {"deleted": str(chat_id)})


async def list_messages(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    limit, after = _page(request, "after")
    found = await chats.messages(
        request.app[appkeys.DB], principal, _chat_id(request), after=after, limit=limit
    )
    next_after = found[-1].seq if len(found) == limit else None
    manual = await chats.manual_runs(request.app[appkeys.DB], principal, found)
    views = [chats.message_view(m, manual) for m in found]
    return common.ok(request, {"messages": views, "next_after": next_after})


def _message(body: Any) -> tuple[str, str | None]:
    """The message's text and the sender's time zone (None when not sent)."""
    if isinstance(body, dict) and "messages" in body:
        loaded = _load(schema.UseChatBody, body)
        text = turns.check_text(schema.last_user_text(loaded))
    else:
        loaded = _load(schema.TextMessage, body)
        text = turns.check_text(loaded["text"])
    zone = loaded.get("timezone")
    return text, workspace.checked_zone(zone) if zone is not None else None


def _source(principal: Principal) -> str:
    return "api" if principal.kind == "api_key" else "user"


async def post_message(request: web.Request) -> web.StreamResponse:
    """Start a turn and stream its parts; the turn goes on if the client goes away."""
    principal = await authn.authenticate(request)
    principal.require("editor")
    text, zone = _message(await common.json_body(request))
    services = appkeys.services(request.app)
    chat = await chats.get(services.db, principal, _chat_id(request))
    after = await events.last_id(services.redis, chat.id)
    if not chat.title:
        await chats.rename(services.db, principal, chat.id, text[:80])
    chat_graph = await request.app[appkeys.AGENT].graph()  # opened here by a first turn
    # Nothing that can fail between taking the lease and the turn that releases it: a lease
    # taken just before a database or Redis outage was left held for a minute.
    turn = await turns.begin(services, chat, text, source=_source(principal))
    _spawn(request.app, turns.execute(
        services, chat_graph, turn, text, principal,
        watches=functools.partial(tools.for_turn, zone=zone),
    ))  # fmt: skip
    return await _stream_turn(request, chat.id, str(turn.id), after)


def _spawn(app: web.Application, work: Any) -> None:
    task = asyncio.create_task(work)
    running = app[appkeys.TURNS]
    running.add(task)
    task.add_done_callback(running.discard)
    task.add_done_callback(_report)


def _report(task: asyncio.Task[Any]) -> None:
    """A turn that raised (Postgres or Redis failed outside the graph) has told its listener
    what it could (turns.execute); this reads the exception so it is logged once, briefly."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.warning("turn ended by %s: %s", type(exc).__name__, exc)


async def resume(request: web.Request) -> web.StreamResponse:
    """Resume the turn in flight from Last-Event-ID, or 204 when none runs."""
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    chat = await chats.get(services.db, principal, _chat_id(request))
    active = await events.active_turn(services.redis, chat.id)
    if active is None:
        return web.Response(status=204)
    turn_id, first = active
    after = _last_event_id(request) or stream_ids.previous(first)
    return await _stream_turn(request, chat.id, turn_id, after)


def _last_event_id(request: web.Request) -> str | None:
    """The client's Last-Event-ID when it is a stream id Redis accepts; anything else is read as
    no id (a client that sent garbage gets the turn from its start, or the tail from now)."""
    return stream_ids.valid(request.headers.get("Last-Event-ID"))


async def _stream_turn(
    request: web.Request, chat_id: uuid.UUID, turn_id: str, after: str
) -> web.StreamResponse:
    redis = request.app[appkeys.REDIS]
    async with request.app[appkeys.HUB].subscribe(chat_id, after) as source:
        turn_events = events.turn_events(source, redis, chat_id, turn_id)
        return await _sse(request, _turn_frames(turn_events))


async def _turn_frames(
    source: AsyncIterator[tuple[str, parts.Part]],
) -> AsyncIterator[tuple[str | None, str]]:
    async with _ends_with_error() as failed:
        async for entry_id, part in source:
            yield entry_id, json.dumps(part)
    if failed:
        yield None, json.dumps(failed[0])
    yield None, "[DONE]"


@contextlib.asynccontextmanager
async def _ends_with_error() -> AsyncIterator[list[parts.Part]]:
    """Headers are out once a stream runs: a failure (Redis gone mid-stream) must end it with
    an error part. Raised, the error envelope would be written into the open stream as a second
    response (clients read garbage: JSONDecodeError, RemoteProtocolError)."""
    failed: list[parts.Part] = []
    try:
        yield failed
    except errors.LookoutError as exc:
        failed.append(parts.error(exc.code, exc.message))


async def tail(request: web.Request) -> web.StreamResponse:
    """Every turn of the chat as it happens (scheduled ones included), from Last-Event-ID."""
    principal = await authn.authenticate(request)
    services = appkeys.services(request.app)
    chat = await chats.get(services.db, principal, _chat_id(request))
    after = _last_event_id(request) or await events.last_id(services.redis, chat.id)
    async with request.app[appkeys.HUB].subscribe(chat.id, after) as source:
        return await _sse(request, _tail_frames(source))


async def _tail_frames(
    source: AsyncIterator[tuple[str, str, parts.Part] | None],
) -> AsyncIterator[tuple[str | None, str]]:
    async with _ends_with_error() as failed:
        async for event in source:
            if event is not None:
                yield event[0], json.dumps(event[2])
    if failed:
        yield None, json.dumps(failed[0])


async def _sse(
    request: web.Request, frames: AsyncIterator[tuple[str | None, str]]
) -> web.StreamResponse:
    response: EventSourceResponse
    async with sse_response(
        request, headers=STREAM_HEADERS, ping_interval=PING_S, allow_all_methods=True
    ) as response:
        open_streams = request.app[appkeys.STREAMS]
        open_streams.add(response)
        try:
            async for entry_id, data in shutdown.until_stopped(response, frames):
                await response.send(data, id=entry_id)
        except ConnectionResetError:
            pass  # the client left; the turn itself goes on
        finally:
            open_streams.discard(response)
    return response
