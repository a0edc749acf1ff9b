from __future__ import annotations

import re
from pathlib import Path

import pytest

from lookout.db import queries

SOURCE = Path(__file__).resolve().parents[2] / "src" / "lookout"
# repo.fetch*(db, "name", ...) and queries.get("name") are the only ways code names a statement.
_USES = re.compile(r"""(?:queries\.get|fetchrow|fetchval|fetch|execute)\(\s*(?:\w+,\s*)?"(\w+)\"""")


def test_every_query_name_used_in_code_exists() -> None:
    defined = queries.all_queries()
    used = {
        name for path in SOURCE.rglob("*.py") for name in _USES.findall(path.read_text("utf-8"))
    }
    assert used, "the scan found no query uses: the pattern is wrong"
    assert sorted(used - defined.keys()) == []


def test_parse_rejects_duplicates_and_strips_comments() -> None:
    parsed = queries.parse("-- name: a\n-- says a\nSELECT 1;\n-- name: b\nSELECT 2;\n")
    assert parsed == {"a": "SELECT 1", "b": "SELECT 2"}
    with pytest.raises(ValueError, match="twice"):
        queries.parse("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n")


def test_a_part_is_pasted_where_it_is_included_and_is_no_query_itself() -> None:
    text = (
        "-- part: cols\n-- says what\nSELECT a, b\nFROM t\n"
        "-- name: one\n-- include: cols\nWHERE a = $1;\n"
        "-- name: two\nWITH x AS (\n    -- include: cols\n    LIMIT 1\n) SELECT * FROM x;\n"
    )
    assert queries.parse(text) == {
        "one": "SELECT a, b\nFROM t\nWHERE a = $1",
        "two": "WITH x AS (\n    SELECT a, b\n    FROM t\n    LIMIT 1\n) SELECT * FROM x",
    }
    with pytest.raises(ValueError, match="no `-- part:` defines"):
        queries.parse("-- name: a\n-- include: nowhere\nWHERE 1;\n")
