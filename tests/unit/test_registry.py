"""The registry: what every door is generated from."""

from __future__ import annotations

import json
from typing import Any

import pytest

import lookout.capabilities  # noqa: F401 - registers the verbs
from lookout import errors
from lookout.capabilities import registry

VERB_NAMES = [verb.name for verb in registry.all_verbs()]  # every verb, present and future


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(sub for value in node.values() for sub in _walk(value))]
    if isinstance(node, list):
        return [sub for item in node for sub in _walk(item)]
    return []


def test_importing_capabilities_registers_the_web_verbs() -> None:
    assert {"web.discover", "web.scrape"} <= set(VERB_NAMES)
    assert sorted(VERB_NAMES) == VERB_NAMES
    assert registry.get("web.scrape").title == "Scrape web pages"


def test_an_unknown_verb_is_not_found() -> None:
    with pytest.raises(errors.NotFound, match=r"web\.nope"):
        registry.get("web.nope")


def test_registering_a_second_verb_under_a_taken_name_fails() -> None:
    import dataclasses

    impostor = dataclasses.replace(registry.get("web.scrape"), title="Another")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(impostor)


@pytest.mark.parametrize("name", VERB_NAMES)
def test_every_schema_converts_to_self_contained_json_schema(name: str) -> None:
    verb = registry.get(name)
    for schema in (registry.input_json_schema(verb), registry.output_json_schema(verb)):
        json.dumps(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert not any("$ref" in node for node in _walk(schema))
        for node in _walk(schema):
            bounded_by_format = "enum" in node or node.get("format") == "date-time"
            if node.get("type") in ("string", ["string", "null"]) and not bounded_by_format:
                assert "maxLength" in node, node
            if node.get("type") in ("array", ["array", "null"]):
                assert "maxItems" in node, node


def test_the_json_schema_tells_a_model_what_it_may_send() -> None:
    schema = registry.input_json_schema(registry.get("web.scrape"))
    assert schema["properties"]["urls"]["maxItems"] == 20
    assert schema["properties"]["formats"]["items"]["enum"] == [
        "markdown",
        "text",
        "links",
        "html",
        "data",
        "screenshot",
    ]
    assert schema["properties"]["only_main_content"]["default"] is True
    page = registry.output_json_schema(registry.get("web.scrape"))["properties"]["pages"]["items"]
    assert page["additionalProperties"] is False
    assert {"code", "message"} <= set(json.dumps(page["properties"]["error"]).split('"'))


def test_json_schema_is_a_copy_the_caller_may_change() -> None:
    verb = registry.get("web.discover")
    registry.input_json_schema(verb)["properties"].clear()
    assert "url" in registry.input_json_schema(verb)["properties"]


def _invalid(name: str, raw: object) -> errors.InvalidInput:
    with pytest.raises(errors.InvalidInput) as caught:
        registry.validate_input(registry.get(name), raw)
    return caught.value


def test_unknown_keys_are_rejected_by_name() -> None:
    problem = _invalid("web.scrape", {"url": "https://example.com/", "selector": "main"})
    assert problem.details["fields"] == {"selector": ["Unknown field."]}
    assert problem.status == 400 and problem.code == "invalid_input"


def test_over_long_lists_are_rejected_with_the_field() -> None:
    urls = [f"https://example.com/{i}" for i in range(21)]
    problem = _invalid("web.scrape", {"urls": urls})
    assert "urls" in problem.details["fields"]
    assert "urls" in problem.message


def test_each_bad_item_is_named_by_its_position() -> None:
    problem = _invalid("web.scrape", {"urls": ["https://ok.example/", "ftp://files.example/"]})
    assert problem.details["fields"] == {"urls": {1: ["Must be an absolute http or https URL."]}}


@pytest.mark.parametrize("raw", [[], "https://example.com", None, 3])
def test_a_body_that_is_not_an_object_is_invalid_input(raw: object) -> None:
    problem = _invalid("web.scrape", raw)
    assert "_schema" in problem.details["fields"]


def test_url_is_a_one_item_alias_and_defaults_apply() -> None:
    data = registry.validate_input(registry.get("web.scrape"), {"url": "https://example.com/"})
    assert data == {
        "urls": ["https://example.com/"],
        "formats": ["markdown"],
        "only_main_content": True,
        "max_chars": 100_000,
        "render": "auto",
    }


def test_url_and_urls_together_are_ambiguous() -> None:
    problem = _invalid("web.scrape", {"url": "https://a.example/", "urls": ["https://b.example/"]})
    assert "either url or urls" in problem.details["fields"]["urls"][0]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"url": "https://example.com/", "formats": ["pdf"]}, "formats"),
        ({"url": "https://example.com/", "max_chars": 10_000_000}, "max_chars"),
        ({"url": "https://example.com/" + "a" * 2100}, "url"),
    ],
)
def test_scrape_bounds(raw: dict[str, Any], field: str) -> None:
    assert field in _invalid("web.scrape", raw).details["fields"]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"url": "https://example.com/", "limit": 5001}, "limit"),
        ({"url": "https://example.com/", "limit": 0}, "limit"),
        ({"url": "https://example.com/", "search": "x" * 201}, "search"),
        ({"limit": 10}, "url"),
    ],
)
def test_discover_bounds(raw: dict[str, Any], field: str) -> None:
    assert field in _invalid("web.discover", raw).details["fields"]


def test_discover_is_slow_only_above_its_page_budget() -> None:
    verb = registry.get("web.discover")
    small = registry.validate_input(verb, {"url": "https://example.com/"})
    large = registry.validate_input(verb, {"url": "https://example.com/", "limit": 5000})
    assert not verb.is_slow(small)
    assert verb.is_slow(large)
    assert verb.max_units(large) == 1


def test_scrape_counts_what_it_may_and_did_bill() -> None:
    verb = registry.get("web.scrape")
    data = registry.validate_input(verb, {"urls": ["https://a.example/", "https://b.example/"]})
    output = {"pages": [{"error": None}, {"error": {"code": "fetch_failed", "message": "x"}}]}
    assert verb.max_units(data) == 2
    assert verb.billable_units(output) == 1


def test_dump_output_serializes_and_refuses_a_result_that_breaks_its_schema() -> None:
    verb = registry.get("web.discover")
    good = {
        "links": [{"url": "https://a.example/", "title": None, "snippet": None}],
        "truncated": False,
    }
    assert registry.dump_output(verb, good) == good
    with pytest.raises(errors.LookoutError):
        registry.dump_output(verb, {"links": [{"url": "x" * 5000}], "truncated": False})
