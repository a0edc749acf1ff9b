"""The OpenAPI document names every operation, types every answer's `data`, tags every area and
names its server from LOOKOUT_PUBLIC_URL (what generated clients need)."""

from __future__ import annotations

from typing import Any

from openapi_spec_validator import validate

from lookout.routes import openapi

METHODS = {"get", "post", "put", "patch", "delete"}


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def _resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    resolved: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return resolved


def test_every_operation_has_a_unique_operation_id_and_a_declared_tag() -> None:
    document = openapi.document()
    validate(document)
    ids = [operation["operationId"] for _, _, operation in _operations(document)]
    declared = {tag["name"] for tag in document["tags"]}
    assert len(ids) == len(set(ids)) and all(ids)
    assert {"watches_list", "chats_post_message", "web_scrape", "usage_get"} <= set(ids)
    for path, method, operation in _operations(document):
        assert len(operation["tags"]) == 1 and operation["tags"][0] in declared, (path, method)


def test_every_json_answer_has_a_typed_data_schema() -> None:
    document = openapi.document()
    for path, method, operation in _operations(document):
        for status, answer in operation["responses"].items():
            content = answer.get("content", {}).get("application/json")
            if status == "default" or content is None:
                continue
            data = content["schema"]["properties"]["data"]["anyOf"][0]
            shape = _resolve(document, data)
            # an object with its properties named (never a bare {"type": "object"})
            assert shape.get("properties"), (path, method, status, data)
            assert shape.get("additionalProperties") is False or "$ref" not in data


def test_servers_come_from_the_public_url_never_a_request() -> None:
    assert openapi.document("https://lookout.example.com/")["servers"][0]["url"] == (
        "https://lookout.example.com"
    )
    assert openapi.document("")["servers"][0]["url"] == "/"
