"""The OpenAPI 3.1 document of the REST door, generated from the registry."""

from __future__ import annotations

import functools
from typing import Any

import marshmallow
from apispec import APISpec

from lookout import __version__, capabilities, errors
from lookout.capabilities import registry
from lookout.schema import accounts

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
    body: type[marshmallow.Schema] | None = None,
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "responses": {status: _json(envelope(_ANY), summary), "default": _FAILURE},
    }
    if secured:
        operation["security"] = [{"apiKey": []}, {"session": []}]
    if body is not None:
        content = {"application/json": {"schema": registry.json_schema_of(body)}}
        operation["requestBody"] = {"required": True, "content": content}
    return operation


_JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}
_WS = {"name": "ws", "in": "path", "required": True, "schema": {"type": "string"}}
_KEY_ID = {"name": "key_id", "in": "path", "required": True, "schema": {"type": "string"}}

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
