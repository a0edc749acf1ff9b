"""Every runtime SQL statement, loaded once from queries.sql by its `-- name:` header."""

from __future__ import annotations

import functools
import importlib.resources
import re

_HEADER = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    """Split a queries file into {name: statement}; a duplicated name is an error."""
    pieces = _HEADER.split(text)
    found: dict[str, str] = {}
    for name, body in zip(pieces[1::2], pieces[2::2], strict=True):
        if name in found:
            raise ValueError(f"query {name!r} is defined twice in queries.sql")
        lines = [line for line in body.strip().splitlines() if not line.lstrip().startswith("--")]
        found[name] = "\n".join(lines).strip().rstrip(";")
    return found


@functools.cache
def all_queries() -> dict[str, str]:
    text = importlib.resources.files("lookout.db").joinpath("queries.sql").read_text("utf-8")
    return parse(text)


def get(name: str) -> str:
    return all_queries()[name]
