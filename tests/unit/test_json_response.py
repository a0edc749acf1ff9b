"""The door's JSON answers: written by orjson, read back the same, whatever orjson cannot write
written by the standard library."""

from __future__ import annotations

import json

from lookout.routes import common


def test_an_answer_reads_back_the_same_with_its_text_as_utf8() -> None:
    # Given an answer with non-ASCII text, nesting and nulls
    body = {"data": {"markdown": "Ünïcode, «quoted» 東京", "links": [], "n": None}, "ok": True}

    # When it is written
    response = common.json_response(body, status=201, headers={"X-Check": "1"})

    # Then it reads back the same, its text as UTF-8 (not \\u escapes), with its status and headers
    assert isinstance(response.body, bytes)
    assert json.loads(response.body) == body
    assert "東京".encode() in response.body
    assert response.status == 201 and response.headers["X-Check"] == "1"
    assert response.content_type == "application/json" and response.charset == "utf-8"


def test_what_orjson_cannot_write_is_written_by_the_standard_library() -> None:
    # Given an integer past 64 bits (orjson refuses it)
    body = {"count": 2**70}

    # When it is written, then it reads back the same
    response = common.json_response(body)
    assert isinstance(response.body, bytes)
    assert json.loads(response.body) == body
