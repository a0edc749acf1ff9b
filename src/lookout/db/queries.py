"""Every runtime SQL statement, loaded once from queries.sql by its `-- name:` header."""

from __future__ import annotations

import functools
import importlib.resources
import re

_HEADER = re.compile(r"^--\s*(name|part):\s*(\w+)\s*$", re.MULTILINE)
# A statement may include a shared piece of SQL (`-- part: x`) with a `-- include: x` line: the
# text is pasted in once, when the file is loaded (the statement sent is the same as if written
# out; no SQL is built at run time).
_INCLUDE = re.compile(r"^([ \t]*)--\s*include:\s*(\w+)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    """Split a queries file into {name: statement}, parts included; a duplicated name is an
    error, and so is an include of a part that is not defined."""
    pieces = _HEADER.split(text)
    found: dict[str, str] = {}
    shared: dict[str, str] = {}
    for kind, name, body in zip(pieces[1::3], pieces[2::3], pieces[3::3], strict=True):
        into = shared if kind == "part" else found
        if name in into:
            raise ValueError(f"{kind} {name!r} is defined twice in queries.sql")
        into[name] = body
    return {name: _clean(_include(body, shared)) for name, body in found.items()}


def _include(body: str, shared: dict[str, str]) -> str:
    def paste(match: re.Match[str]) -> str:
        indent, name = match.group(1), match.group(2)
        if name not in shared:
            raise ValueError(f"queries.sql includes {name!r}, which no `-- part:` defines")
        return "\n".join(indent + line for line in _clean(shared[name]).splitlines())

    return _INCLUDE.sub(paste, body)


def _clean(body: str) -> str:
    lines = [line for line in body.strip().splitlines() if not line.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";")


@functools.cache
def all_queries() -> dict[str, str]:
    text = importlib.resources.files("lookout.db").joinpath("queries.sql").read_text("utf-8")
    return parse(text)


def get(name: str) -> str:
    return all_queries()[name]
