"""The OpenAPI 3.1 document of the web process's API: the REST door generated from the registry,
and every /api route with its body schema (tests/integration/test_rest_door.py holds the two
lists of routes, served and documented, equal)."""

from __future__ import annotations

import functools
from typing import Any

import marshmallow
from apispec import APISpec

from lookout import __version__, capabilities, errors
from lookout.capabilities import registry
from lookout.chat import chats as chat_pages
from lookout.notify import schema as notify_schema
from lookout.schema import accounts, chats, connectors, watches
from lookout.schema import oauth as oauth_schema

_ERROR_CODES = sorted({kind.code for kind in errors._subclasses(errors.LookoutError)})

_META = {
    "type": "object",
    "properties": {
        "verb": {"type": ["string", "null"]},
        "request_id": {"type": "string"},
        "credits_charged": {"type": "integer"},
        "job_id": {"type": ["string", "null"]},
        "duration_ms": {"type": ["integer", "null"]},
    },
}
_ERROR = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string", "enum": _ERROR_CODES},
        "message": {"type": "string"},
        "details": {"type": "object"},
    },
}


def envelope(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["ok", "data", "error", "meta"],
        "properties": {
            "ok": {"type": "boolean"},
            "data": {"anyOf": [data, {"type": "null"}]},
            "error": {"anyOf": [{"$ref": "#/components/schemas/Error"}, {"type": "null"}]},
            "meta": {"$ref": "#/components/schemas/Meta"},
        },
    }


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_FAILURE = _json(envelope({"type": "null"}), "Failure: `error.code` says what and how to fix it")
_ANY = {"type": "object"}


def _verb_operation(verb: registry.Verb) -> dict[str, Any]:
    body = registry.input_json_schema(verb)
    body.setdefault("properties", {})["async"] = {
        "type": "boolean",
        "description": "Run as a job: answer 202 with meta.job_id unless it finishes quickly.",
    }
    return {
        "operationId": verb.name.replace(".", "_"),
        "summary": verb.title,
        "description": verb.description,
        "tags": [verb.name.split(".")[0]],
        "security": [{"apiKey": []}],
        "parameters": [
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "schema": {"type": "string", "maxLength": 255},
            },
        ],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": _json(envelope(registry.output_json_schema(verb)), "The verb's result"),
            "202": _json(envelope(_ANY), "Still running as a job: poll Location"),
            "default": _FAILURE,
        },
    }


def _plain(
    summary: str,
    *,
    secured: bool = True,
    status: str = "200",
    body: type[marshmallow.Schema] | dict[str, Any] | None = None,
    parameters: tuple[dict[str, Any], ...] = (),
    responses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An operation answering the envelope (or `responses`); `body` a schema or JSON Schema."""
    operation: dict[str, Any] = {
        "summary": summary,
        "responses": responses or {status: _json(envelope(_ANY), summary), "default": _FAILURE},
    }
    if secured:
        operation["security"] = [{"apiKey": []}, {"session": []}]
    if body is not None:
        shape = body if isinstance(body, dict) else registry.json_schema_of(body)
        content = {"application/json": {"schema": shape}}
        operation["requestBody"] = {"required": True, "content": content}
    if parameters:
        operation["parameters"] = list(parameters)
    return operation


def _stream(
    summary: str,
    *,
    body: dict[str, Any] | None = None,
    parameters: tuple[dict[str, Any], ...] = (),
    otherwise: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An operation answering Server-Sent Events (the AI SDK UI message stream, v1)."""
    events = {
        "description": "Server-Sent Events: one UI message stream part a `data:` line, each "
        "with an `id:` to resume from (Last-Event-ID)",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
    responses = {"200": events, **(otherwise or {}), "default": _FAILURE}
    return _plain(summary, body=body, parameters=parameters, responses=responses)


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _number(
    name: str, description: str, *, least: int = 0, most: int | None = None
) -> dict[str, Any]:
    schema = {"type": "integer", "minimum": least} | ({"maximum": most} if most else {})
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


_JOB_ID, _WS, _KEY_ID = _path("job_id"), _path("ws"), _path("key_id")
_CHAT_ID, _WATCH_ID = _path("chat_id"), _path("automation_id")
_CONNECTOR_ID, _TARGET_ID = _path("connector_id"), _path("target_id")
_LIMIT = _number("limit", "At most this many (default 50)", least=1, most=chat_pages.MAX_PAGE)
_LAST_EVENT_ID = {
    "name": "Last-Event-ID",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "Resume after this event (the `id:` of the last one received)",
}
_MESSAGE = {
    "oneOf": [
        registry.json_schema_of(chats.TextMessage),
        registry.json_schema_of(chats.UseChatBody),
    ]
}
_NO_CONTENT = {"204": {"description": "Done; no body"}}
# An OAuth authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707), as the client sent it.
_AUTHORIZATION_QUERY = tuple(
    {"name": name, "in": "query", "required": False, "schema": {"type": "string"}}
    for name in ("response_type", "client_id", "redirect_uri", "state", "scope",
                 "code_challenge", "code_challenge_method", "resource")
)  # fmt: skip

_OTHER_PATHS: dict[str, dict[str, Any]] = {
    "/v1/verbs": {"get": _plain("List the verbs with their schemas and prices", secured=False)},
    "/v1/jobs/{job_id}": {
        "parameters": [_JOB_ID],
        "get": _plain("A job's status, progress and (once finished) result envelope"),
        "delete": _plain("Cancel a job"),
    },
    "/v1/usage": {"get": _plain("Balance, recent ledger and per-verb totals")},
    "/api/auth/signup": {
        "post": _plain("Create an account", secured=False, status="201", body=accounts.SignupSchema)
    },
    "/api/auth/login": {
        "post": _plain(
            "Sign in (sets the session cookie)", secured=False, body=accounts.LoginSchema
        )
    },
    "/api/auth/logout": {"post": _plain("Sign out")},
    "/api/me": {"get": _plain("The current user, workspaces, role and balance")},
    "/api/workspaces/{ws}/keys": {
        "parameters": [_WS],
        "get": _plain("List the workspace's API keys"),
        "post": _plain(
            "Create an API key (its text is shown once)", status="201", body=accounts.NewKeySchema
        ),
    },
    "/api/workspaces/{ws}/keys/{key_id}": {
        "parameters": [_WS, _KEY_ID],
        "delete": _plain("Revoke an API key"),
    },
    "/api/workspaces/{ws}/mcp-connectors": {
        "parameters": [_WS],
        "get": _plain("List the workspace's MCP connectors"),
        "post": _plain(
            "Add an MCP connector (a remote MCP server whose tools the chat agent may call)",
            status="201",
            body=connectors.NewConnectorSchema,
        ),
    },
    "/api/workspaces/{ws}/mcp-connectors/{connector_id}": {
        "parameters": [_WS, _CONNECTOR_ID],
        "delete": _plain("Remove an MCP connector"),
    },
    "/api/workspaces/{ws}/mcp-connectors/{connector_id}/test": {
        "parameters": [_WS, _CONNECTOR_ID],
        "post": _plain("Connect to an MCP connector and list its tools"),
    },
    "/api/workspaces/{ws}/notification-targets": {
        "parameters": [_WS],
        "get": _plain("List the workspace's notification targets"),
        "post": _plain(
            "Add a notification target (an Apprise URL, or an http(s) URL for signed webhooks)",
            status="201",
            body=notify_schema.NewTargetSchema,
        ),
    },
    "/api/workspaces/{ws}/notification-targets/{target_id}": {
        "parameters": [_WS, _TARGET_ID],
        "delete": _plain("Remove a notification target"),
    },
    "/api/workspaces/{ws}/notification-targets/{target_id}/test": {
        "parameters": [_WS, _TARGET_ID],
        "post": _plain("Send a test notification to a target"),
    },
    "/api/chats": {
        "get": _plain(
            "List the workspace's chats, the most recently active first, with their watches",
            parameters=(_LIMIT, _number("offset", "Skip this many")),
        ),
        "post": _plain("Create a chat", status="201", body=chats.NewChat),
    },
    "/api/chats/{chat_id}": {
        "parameters": [_CHAT_ID],
        "get": _plain("A chat and its watch"),
        "patch": _plain("Rename a chat", body=chats.Rename),
        "delete": _plain("Delete a chat with its messages, state and watch"),
    },
    "/api/chats/{chat_id}/messages": {
        "parameters": [_CHAT_ID],
        "get": _plain(
            "A page of the chat's messages, oldest first",
            parameters=(
                _LIMIT,
                _number("after", "After this message `seq` (a page's `next_after`)"),
            ),
        ),
        "post": _stream(
            "Ask: start a turn and stream it (a plain {text}, or the body `useChat` posts); the "
            "turn goes on if the client goes away",
            body=_MESSAGE,
        ),
    },
    "/api/chats/{chat_id}/stream": {
        "parameters": [_CHAT_ID],
        "get": _stream(
            "Resume the turn in flight from Last-Event-ID",
            parameters=(_LAST_EVENT_ID,),
            otherwise={"204": {"description": "No turn is running"}},
        ),
    },
    "/api/chats/{chat_id}/events": {
        "parameters": [_CHAT_ID],
        "get": _stream(
            "Every turn of the chat as it happens, scheduled ones included, from Last-Event-ID",
            parameters=(_LAST_EVENT_ID,),
        ),
    },
    "/api/automations/watches": {
        "get": _plain("List the workspace's watches"),
        "post": _plain(
            "Watch a chat: re-ask its question on a cadence", status="201", body=watches.NewWatch
        ),
    },
    "/api/automations/{automation_id}": {
        "parameters": [_WATCH_ID],
        "patch": _plain(
            "Change a watch's notification settings", body=notify_schema.WatchPatchSchema
        ),
        "delete": _plain("Stop watching", responses={**_NO_CONTENT, "default": _FAILURE}),
    },
    "/api/automations/{automation_id}/run": {
        "parameters": [_WATCH_ID],
        "post": _plain("Run a watch now", status="202"),
    },
    "/api/automations/{automation_id}/runs": {
        "parameters": [_WATCH_ID],
        "get": _plain("A watch's last 100 runs and their notification deliveries"),
    },
    # OAuth 2.1 for MCP connectors: the consent page's API and a workspace's connected agents
    # (the authorization server's own endpoints, /token, /register…, are in its RFC 8414
    # metadata at /.well-known/oauth-authorization-server).
    "/api/oauth/authorize": {
        "get": _plain(
            "What an authorization request (its query, as sent to /authorize) asks, for the "
            "signed-in person: the client, the scopes, their workspaces",
            secured=False,
            parameters=_AUTHORIZATION_QUERY,
        ),
        "post": _plain(
            "Allow or deny an authorization request; answers where to send the browser",
            secured=False,
            body=oauth_schema.DecisionSchema,
        ),
    },
    "/api/workspaces/{ws}/oauth-agents": {
        "parameters": [_WS],
        "get": _plain("List the agents connected to the workspace over OAuth"),
    },
    "/api/workspaces/{ws}/oauth-agents/{grant_id}": {
        "parameters": [_WS, _path("grant_id")],
        "delete": _plain("Revoke a connected agent (its tokens stop working at once)"),
    },
}


@functools.cache
def document() -> dict[str, Any]:
    spec = APISpec(
        title="Lookout API",
        version=__version__,
        openapi_version="3.1.0",
        info={"description": "The live web as verbs, metered in credits. Every answer is an "
              "envelope: {ok, data, error, meta}."},
    )  # fmt: skip
    spec.components.schema("Meta", _META)
    spec.components.schema("Error", _ERROR)
    spec.components.security_scheme("apiKey", {"type": "http", "scheme": "bearer"})
    spec.components.security_scheme(
        "session", {"type": "apiKey", "in": "cookie", "name": "lookout_session"}
    )
    for verb in capabilities.registry.all_verbs():
        spec.path(
            path="/v1/" + verb.name.replace(".", "/"), operations={"post": _verb_operation(verb)}
        )
    for path, item in _OTHER_PATHS.items():
        operations = {k: v for k, v in item.items() if k != "parameters"}
        spec.path(path=path, operations=operations, parameters=item.get("parameters", []))
    return spec.to_dict()
