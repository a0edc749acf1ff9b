"""Pieces of the OpenAPI document: the envelope around a typed `data`, and one operation (its
operationId, tag, security, body, parameters and answers)."""

from __future__ import annotations

from typing import Any

import marshmallow

from lookout import errors
from lookout.capabilities import registry

_ERROR_CODES = sorted({kind.code for kind in errors._subclasses(errors.LookoutError)})
REF = "#/components/schemas/"

META = {
    "type": "object",
    "properties": {
        "verb": {"type": ["string", "null"]},
        "request_id": {
            "type": "string",
            "description": "Correlates logs: the X-Request-Id the client sent, or a new one. "
            "Never a key for anything else: sending the same one twice runs and charges twice.",
        },
        "call_id": {
            "type": ["string", "null"],
            "description": "A verb call's own id, made by Lookout: the key of its credits in "
            "the ledger (GET /v1/usage lists it).",
        },
        "credits_charged": {"type": "integer"},
        "job_id": {"type": ["string", "null"]},
        "duration_ms": {"type": ["integer", "null"]},
    },
}
ERROR = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string", "enum": _ERROR_CODES},
        "message": {"type": "string"},
        "details": {"type": "object"},
    },
}

# The schemas `data` refers to, by component name; document() registers them.
DATA_SCHEMAS: dict[str, type[marshmallow.Schema]] = {}


def component_name(schema: type[marshmallow.Schema] | marshmallow.Schema) -> str:
    """Its class name without "Schema" (the plugin also hands over instances)."""
    kind = schema if isinstance(schema, type) else type(schema)
    return kind.__name__.removesuffix("Schema")


def data_ref(schema: type[marshmallow.Schema]) -> dict[str, Any]:
    """A $ref to `schema` as a component (registered when the document is built)."""
    name = component_name(schema)
    known = DATA_SCHEMAS.setdefault(name, schema)
    assert known is schema, f"two response schemas are named {name}"
    return {"$ref": REF + name}


def envelope(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["ok", "data", "error", "meta"],
        "properties": {
            "ok": {"type": "boolean"},
            "data": {"anyOf": [data, {"type": "null"}]},
            "error": {"anyOf": [{"$ref": REF + "Error"}, {"type": "null"}]},
            "meta": {"$ref": REF + "Meta"},
        },
    }


def as_json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


FAILURE = as_json(envelope({"type": "null"}), "Failure: `error.code` says what and how to fix it")
NO_CONTENT = {"204": {"description": "Done; no body"}}


def plain(
    op: str,
    summary: str,
    *,
    data: type[marshmallow.Schema] | None,
    tag: str,
    secured: bool = True,
    status: str = "200",
    body: type[marshmallow.Schema] | dict[str, Any] | None = None,
    parameters: tuple[dict[str, Any], ...] = (),
    responses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An operation answering the envelope with `data` (or `responses`); `body` a schema or a
    JSON Schema."""
    if responses is None:
        assert data is not None, f"{op}: say what it answers"
        responses = {status: as_json(envelope(data_ref(data)), summary), "default": FAILURE}
    operation: dict[str, Any] = {
        "operationId": op,
        "summary": summary,
        "tags": [tag],
        "responses": responses,
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


def stream(
    op: str,
    summary: str,
    *,
    tag: str,
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
    responses = {"200": events, **(otherwise or {}), "default": FAILURE}
    return plain(
        op, summary, data=None, tag=tag, body=body, parameters=parameters, responses=responses
    )


def path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def number(
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
