"""web.scrape's output documents each page's metadata, in the verb's schema and in OpenAPI."""

from __future__ import annotations

import datetime
from typing import Any

import lookout.capabilities  # noqa: F401 - registers the verbs
from lookout.capabilities import registry
from lookout.routes import openapi

FIELDS = {
    "title",
    "description",
    "language",
    "canonical_url",
    "published_at",
    "modified_at",
    "author",
}


def _page_schema(node: Any) -> dict[str, Any] | None:
    """The first object schema in `node` that has both `content_hash` and `metadata`."""
    if isinstance(node, dict):
        if {"content_hash", "metadata"} <= set(node.get("properties", {})):
            return node
        children: list[Any] = list(node.values())
    elif isinstance(node, list):
        children = node
    else:
        return None
    return next(filter(None, map(_page_schema, children)), None)


def test_openapi_documents_page_metadata() -> None:
    page = _page_schema(openapi.document())
    assert page is not None
    metadata = page["properties"]["metadata"]
    documented = next(s for s in metadata["anyOf"] if s.get("type") == "object")
    assert set(documented["properties"]) == FIELDS
    assert "canonical" in documented["properties"]["canonical_url"]["description"]


def test_the_output_schema_accepts_metadata_and_rejects_unknown_keys() -> None:
    verb = registry.get("web.scrape")
    page = {
        "url": "https://a.example/",
        "fetched_at": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
        "metadata": dict.fromkeys(FIELDS, None) | {"language": "en"},
    }
    dumped = registry.dump_output(verb, {"pages": [page]})
    assert dumped["pages"][0]["metadata"]["language"] == "en"
    wrong = {**page, "fetched_at": "2025-01-01T00:00:00+00:00", "metadata": {"keywords": "x"}}
    assert "keywords" in str(verb.output_schema().validate({"pages": [wrong]}))
