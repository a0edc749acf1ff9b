"""The registry as MCP tools: names, schemas, annotations, and paging with opaque cursors."""

from __future__ import annotations

import datetime as dt
import uuid

import jsonschema
import pytest

from lookout import capabilities
from lookout.capabilities import registry
from lookout.mcp import tools

assert capabilities  # importing the package registers every verb


def test_one_tool_per_verb_named_with_underscores_then_jobs_get() -> None:
    names = [tool.name for tool in tools.all_tools()]

    assert names == [verb.name.replace(".", "_") for verb in registry.all_verbs()] + ["jobs_get"]
    assert all(tools.verb_for(name) is not None for name in names[:-1])
    assert tools.verb_for("jobs_get") is None and tools.verb_for("web.scrape") is None


@pytest.mark.parametrize("verb", registry.all_verbs(), ids=lambda verb: verb.name)
def test_a_verb_tool_carries_its_schemas_and_hints(verb: registry.Verb) -> None:
    tool = tools.verb_tool(verb)

    assert tool.title == verb.title
    assert tool.input_schema == registry.input_json_schema(verb)
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is verb.read_only
    assert tool.annotations.idempotent_hint is verb.idempotent
    assert tool.annotations.open_world_hint is verb.open_world
    for other in registry.all_verbs():
        assert other.name not in (tool.description or "")


@pytest.mark.parametrize("verb", registry.all_verbs(), ids=lambda verb: verb.name)
def test_a_slow_capable_tool_accepts_a_job_as_its_output(verb: registry.Verb) -> None:
    schema = tools.verb_tool(verb).output_schema
    assert schema is not None
    now = dt.datetime.now(dt.UTC).isoformat()
    job = {
        "id": str(uuid.uuid4()), "verb": verb.name, "status": "queued",
        "progress": {"done": 0, "total": 0}, "attempts": 0, "created_at": now,
        "started_at": None, "finished_at": None, "expires_at": now, "result": None,
    }  # fmt: skip

    if tools.may_be_slow(verb):
        jsonschema.validate(job, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"unexpected": True}, schema)


@pytest.mark.parametrize("size", [1, 2, 3, 50])
def test_paging_visits_every_tool_once_in_order(size: int) -> None:
    seen, cursor = [], None
    for _ in range(20):
        page, cursor = tools.page(cursor, size)
        seen += [tool.name for tool in page]
        if cursor is None:
            break

    assert seen == [tool.name for tool in tools.all_tools()]


@pytest.mark.parametrize(
    "cursor", ["not-ours", "eyJvZmZzZXQiOiAtMX0", "eyJvZmZzZXQiOiA5OTl9", "e30"]
)
def test_a_cursor_we_did_not_hand_out_is_refused(cursor: str) -> None:
    with pytest.raises(tools.BadCursor):
        tools.page(cursor, 1)
