"""The registry as MCP tools: one tool per verb (`web_scrape`), plus `jobs_get` for slow calls."""

from __future__ import annotations

import base64
import binascii
import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lookout import jsonin
from lookout.capabilities import registry

if TYPE_CHECKING:  # mcp loads when an MCP call is made, not in every worker
    import mcp.types as mcp_types

JOBS_GET = "jobs_get"
MAX_JOB_WAIT_S = 30

_JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"]
_TIME = {"type": ["string", "null"], "format": "date-time"}
# What jobs.view() returns; `result` is the envelope of the finished call.
JOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid", "description": "The job id."},
        "verb": {"type": "string"},
        "status": {"type": "string", "enum": _JOB_STATUSES},
        "progress": {
            "type": "object",
            "properties": {"done": {"type": "integer"}, "total": {"type": "integer"}},
        },
        "attempts": {"type": "integer"},
        "created_at": _TIME,
        "started_at": _TIME,
        "finished_at": _TIME,
        "expires_at": _TIME,
        "result": {
            "type": ["object", "null"],
            "description": "Once finished: {ok, data, error, meta}; data is the verb's output.",
        },
    },
    "required": ["id", "verb", "status", "progress", "result"],
}
_JOBS_GET_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string", "format": "uuid", "description": "The job id to look up."},
        "wait_seconds": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_JOB_WAIT_S,
            "default": 0,
            "description": "Wait up to this long for the job to finish before answering.",
        },
    },
    "required": ["job_id"],
    "additionalProperties": False,
}


def tool_name(verb: registry.Verb) -> str:
    return verb.tool_name


def verb_for(name: str) -> registry.Verb | None:
    """The verb a tool name stands for, or None."""
    return registry.for_tool(name)


def may_be_slow(verb: registry.Verb) -> bool:
    return callable(verb.slow) or bool(verb.slow)


def all_tools() -> list[mcp_types.Tool]:
    """Every tool, in a stable order: the verbs by name, then jobs_get."""
    return [*(verb_tool(verb) for verb in registry.all_verbs()), jobs_tool()]


# A result too large for the client says so (mcp/bounds.py); the output schemas allow it.
TRUNCATION_PROPERTIES: dict[str, Any] = {
    "truncated": {
        "type": "boolean",
        "description": "True when this result is not whole (see truncation).",
    },
    "truncation": {
        "type": "object",
        "description": "When the result was shortened to fit: how, and how to get the rest.",
        "properties": {
            "original_chars": {"type": "integer"},
            "limit_chars": {"type": "integer"},
            "strings_cut_to": {"type": "integer"},
            "lists_cut_to": {"type": "integer"},
            "how_to_get_the_rest": {"type": "string"},
        },
    },
}


def _may_be_cut(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.setdefault("properties", {})
    for name, spec in TRUNCATION_PROPERTIES.items():
        properties.setdefault(name, spec)
    return schema


def verb_tool(verb: registry.Verb) -> mcp_types.Tool:
    import mcp.types as mcp_types

    output = _may_be_cut(registry.output_json_schema(verb))
    if may_be_slow(verb):
        # A large call answers with the job it started instead of the output.
        output = {"type": "object", "anyOf": [output, JOB_SCHEMA]}
    return mcp_types.Tool(
        name=tool_name(verb),
        title=verb.title,
        description=_description(verb),
        input_schema=registry.input_json_schema(verb),
        output_schema=output,
        annotations=mcp_types.ToolAnnotations(
            title=verb.title,
            read_only_hint=verb.read_only,
            destructive_hint=False if verb.read_only else None,
            idempotent_hint=verb.idempotent,
            open_world_hint=verb.open_world,
        ),
    )


def _description(verb: registry.Verb) -> str:
    """The verb's description, speaking of tools by their MCP names."""
    text = verb.description
    for other in registry.all_verbs():
        text = text.replace(other.name, tool_name(other))
    if may_be_slow(verb):
        text += (
            " Large calls run as a background job: the result is then the job (id, status); "
            f"call {JOBS_GET} with its id to get the output."
        )
    return text


def jobs_tool() -> mcp_types.Tool:
    import mcp.types as mcp_types

    return mcp_types.Tool(
        name=JOBS_GET,
        title="Get a job",
        description=(
            "Look up a background job started by a large tool call (its status, progress and, "
            "once finished, the result). Use it only with a job id a previous call returned; "
            "wait_seconds waits for the job to finish (up to 30 s). Free."
        ),
        input_schema=_JOBS_GET_INPUT,
        output_schema=_may_be_cut(copy.deepcopy(JOB_SCHEMA)),
        annotations=mcp_types.ToolAnnotations(
            title="Get a job", read_only_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )


class BadCursor(ValueError):
    """The cursor was not one this server handed out."""


def exists(name: str) -> bool:
    return name == JOBS_GET or verb_for(name) is not None


def page(
    cursor: str | None, size: int, shown: Callable[[str], bool] = lambda name: True
) -> tuple[list[mcp_types.Tool], str | None]:
    """One page of the tools `shown` lets through and the cursor of the next (None on the last
    page)."""
    tools = [tool for tool in all_tools() if shown(tool.name)]
    start = _offset(cursor) if cursor else 0
    if start > len(tools):
        raise BadCursor(cursor)
    end = start + max(1, size)
    return tools[start:end], (_cursor(end) if end < len(tools) else None)


def _cursor(offset: int) -> str:
    raw = json.dumps({"offset": offset}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _offset(cursor: str) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        offset = jsonin.loads(base64.urlsafe_b64decode(padded.encode()))["offset"]
    except (binascii.Error, ValueError, TypeError, KeyError, UnicodeError, jsonin.NotJson):
        raise BadCursor(cursor) from None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise BadCursor(cursor)
    return offset
