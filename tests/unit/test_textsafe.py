"""Text Postgres can store: NUL characters and unpaired surrogates are found, with their path."""

from __future__ import annotations

import json

from lookout import textsafe


def test_clean_json_passes_including_real_surrogate_pairs_and_other_control_characters() -> None:
    body = json.loads('{"a": ["ok \\ud83d\\ude00", {"tab": "x\\ty", "n": 1, "z": null}]}')
    assert textsafe.unstorable(body) is None


def test_a_nul_or_a_lone_surrogate_is_found_where_it_is() -> None:
    assert textsafe.unstorable(json.loads('{"title": "a\\u0000b"}')) == "title"
    assert (
        textsafe.unstorable(json.loads('{"m": [{"text": "ok"}, {"text": "\\ud800"}]}'))
        == "m.1.text"
    )
    assert textsafe.unstorable(json.loads('{"k\\u0000": 1}')) == "_schema"
    assert textsafe.unstorable(json.loads('["x", "\\udfff"]')) == "1"
    assert textsafe.unstorable(json.loads('"\\u0000"')) == "_schema"
