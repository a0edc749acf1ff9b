"""The REST door, generated from the registry: POST /v1/<namespace>/<verb>, GET /v1/verbs."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from lookout import appkeys, errors, middleware
from lookout.access import idempotency, invoke
from lookout.capabilities import registry
from lookout.routes import authn, common

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def path_of(verb: registry.Verb) -> str:
    return "/v1/" + verb.name.replace(".", "/")


def describe(verb: registry.Verb) -> dict[str, Any]:
    return {
        "name": verb.name,
        "title": verb.title,
        "description": verb.description,
        "path": path_of(verb),
        "price": verb.price,
        "slow": verb.slow if isinstance(verb.slow, bool) else "depends on input",
        "read_only": verb.read_only,
        "input_schema": registry.input_json_schema(verb),
        "output_schema": registry.output_json_schema(verb),
    }


async def list_verbs(request: web.Request) -> web.Response:
    return common.ok(request, {"verbs": [describe(verb) for verb in registry.all_verbs()]})


def _split_async(body: Any) -> tuple[Any, bool]:
    """The verb input without the door's own `async` flag."""
    if not isinstance(body, dict) or "async" not in body:
        return body, False
    flag = body["async"]
    if not isinstance(flag, bool):
        raise errors.InvalidInput("'async' must be true or false.", fields={"async": ["boolean"]})
    return {key: value for key, value in body.items() if key != "async"}, flag


def _response(outcome: invoke.Outcome) -> web.Response:
    return common.json_response(outcome.envelope(), status=outcome.status, headers=outcome.headers)


def verb_handler(verb: registry.Verb) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        request[appkeys.VERB] = verb.name
        key = request.headers.get("Idempotency-Key")
        # A replayed answer skips `invoke` and its revocation check: no cached key for it.
        principal = await authn.authenticate(request, checks_revocation=key is None)
        body, run_async = _split_async(await common.json_body(request))
        if key is None:
            return _response(await _invoke(request, verb, body, principal, run_async))
        return await _idempotent(request, verb, body, principal, run_async, key)

    return handle


async def _invoke(
    request: web.Request, verb: registry.Verb, body: Any, principal: Any, run_async: bool
) -> invoke.Outcome:
    return await invoke.invoke(
        appkeys.services(request.app),
        verb.name,
        body,
        principal,
        "rest",
        request_id=middleware.request_id(request),
        run_async=run_async,
    )


async def _idempotent(
    request: web.Request,
    verb: registry.Verb,
    body: Any,
    principal: Any,
    run_async: bool,
    key: str,
) -> web.StreamResponse:
    """Replay the first answer to this key; otherwise run and remember the answer."""
    db = appkeys.services(request.app).db
    scope = idempotency.Scope(principal.workspace_id, principal.actor, idempotency.check_key(key))
    fingerprint = idempotency.fingerprint(request.method, request.path, [body, run_async])
    replay = await idempotency.begin(db, scope, fingerprint=fingerprint)
    if replay is not None:
        replayed = {"Idempotent-Replayed": "true"}
        return common.json_response(replay.body, status=replay.status, headers=replayed)
    try:
        response = _response(await _invoke(request, verb, body, principal, run_async))
    except errors.LookoutError as exc:
        response = middleware.error_response(request, exc)
    except BaseException:
        await idempotency.release(db, scope)
        raise
    await idempotency.finish(db, scope, status=response.status, body=_body(response))
    return response


def _body(response: web.Response) -> dict[str, Any]:
    assert isinstance(response.body, bytes)
    parsed: dict[str, Any] = json.loads(response.body)
    return parsed
