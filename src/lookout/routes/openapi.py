"""The OpenAPI 3.1 document of the web process's API: the REST door generated from the registry,
and every /api route (schema/openapi_paths.py) with its body and the typed `data` it answers.
Every operation has an operationId and a tag, so generated clients get usable names
(openapi-python-client and openapi-typescript build from it: tests/integration/
test_openapi_clients.py)."""

from __future__ import annotations

import functools
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from lookout import __version__, capabilities
from lookout.capabilities import registry
from lookout.routes import openapi_ops as ops
from lookout.routes import openapi_paths, responses

_IDEMPOTENCY_HELP = (
    "Retry safely: the first answer to a key is stored for 24 hours and a repeat of the same "
    "request (same method, path and body) with the same key gets that answer again (header "
    "`Idempotent-Replayed: true`) without running or charging anything. A key belongs to the "
    "API key (or signed-in user) that sent it. The same key with another body is 409 `conflict`, "
    "and so is a repeat while the first request still runs (Retry-After says when to try). "
    "Answers that ask for a retry (rate_limited, busy, unavailable) are not stored. "
    "X-Request-Id is no substitute: it only correlates logs."
)


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
                "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                "description": _IDEMPOTENCY_HELP,
            },
        ],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": ops.as_json(
                ops.envelope(registry.output_json_schema(verb)), "The verb's result"
            ),
            "202": ops.as_json(
                ops.envelope(ops.data_ref(responses.Job)), "Still running as a job: poll Location"
            ),
            "default": ops.FAILURE,
        },
    }


def _servers(public_url: str) -> list[dict[str, str]]:
    if public_url:
        return [{"url": public_url.rstrip("/"), "description": "LOOKOUT_PUBLIC_URL"}]
    return [{"url": "/", "description": "This server (set LOOKOUT_PUBLIC_URL to name it)"}]


@functools.cache
def document(public_url: str = "") -> dict[str, Any]:
    """The document, its `servers` naming `public_url` (never a request's Host)."""
    plugin = MarshmallowPlugin(schema_name_resolver=ops.component_name)
    spec = APISpec(
        title="Lookout API",
        version=__version__,
        openapi_version="3.1.0",
        plugins=[plugin],
        info={"description": "The live web as verbs, metered in credits. Every answer is an "
              "envelope: {ok, data, error, meta}."},
        servers=_servers(public_url),
    )  # fmt: skip
    spec.components.schema("Meta", ops.META)
    spec.components.schema("Error", ops.ERROR)
    spec.components.security_scheme("apiKey", {"type": "http", "scheme": "bearer"})
    spec.components.security_scheme(
        "session", {"type": "apiKey", "in": "cookie", "name": "lookout_session"}
    )
    verbs = capabilities.registry.all_verbs()
    for verb in verbs:
        spec.path(
            path="/v1/" + verb.name.replace(".", "/"), operations={"post": _verb_operation(verb)}
        )
    for path, item in openapi_paths.paths().items():
        operations = {k: v for k, v in item.items() if k != "parameters"}
        spec.path(path=path, operations=operations, parameters=item.get("parameters", []))
    for name, schema in sorted(ops.DATA_SCHEMAS.items()):
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=schema)
    namespaces = sorted({verb.name.split(".")[0] for verb in verbs})
    verb_tags = [{"name": n, "description": f"The {n}.* verbs"} for n in namespaces]
    return {**spec.to_dict(), "tags": [*verb_tags, *openapi_paths.TAGS]}
