"""A Content-Type read as aiohttp reads a well-formed one, and never raising on a malformed one."""

from __future__ import annotations

import pytest
from aiohttp import helpers

from lookout import mediatypes

WELL_FORMED = [
    "text/html",
    "Text/HTML; charset=UTF-8",
    'text/html; charset="utf-8"',
    " application/json ",
    "application/json;x",
    "text/html;",
    "html",  # no subtype: application/octet-stream, as aiohttp says
    "a/b/c",
    "",
]


@pytest.mark.parametrize("raw", WELL_FORMED)
def test_a_content_type_reads_as_aiohttp_reads_it(raw: str) -> None:
    kind, parameters = helpers.parse_content_type(raw)

    assert mediatypes.media_type(raw) == kind
    assert mediatypes.charset(raw) == (parameters.get("charset") or None)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("yO]zX<8;C5*", "application/octet-stream"),
        ("application/json;C5*", "application/json"),
        ("text/html;x*", "text/html"),
    ],
)
def test_a_malformed_content_type_is_read_without_raising(raw: str, kind: str) -> None:
    with pytest.raises(IndexError):  # a parameter ending in `*`, no `=`: what aiohttp raised
        helpers.parse_content_type(raw)

    assert mediatypes.media_type(raw) == kind
    assert mediatypes.charset(raw) is None


def test_no_header_is_no_type() -> None:
    assert mediatypes.media_type(None) == "" and mediatypes.charset(None) is None
