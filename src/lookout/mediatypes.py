"""A Content-Type header read without trusting it.

aiohttp's `content_type` and `charset` parse the header with the standard library's email
parser, which raises IndexError on some malformed values (`yO]zX<8;C5*`: a parameter without
`=`, found by tests/reliability/test_hostile_mcp.py). A hostile client's request was a 500; a
hostile server's page would have failed a whole web.scrape call. These read the media type and
the charset parameter as aiohttp does for well-formed values (an invalid type is
application/octet-stream, as there) and never raise.
"""

from __future__ import annotations

OCTET_STREAM = "application/octet-stream"


def media_type(raw: str | None) -> str:
    """`type/subtype`, lowercased, of a Content-Type value; "" if there is no header."""
    if raw is None:
        return ""
    value = raw.split(";", 1)[0].strip().lower()
    kind, slash, subtype = value.partition("/")
    if not slash or not kind or not subtype or "/" in subtype:
        return OCTET_STREAM
    return value


def charset(raw: str | None) -> str | None:
    """The charset parameter of a Content-Type value (its quotes removed), or None."""
    for parameter in (raw or "").split(";")[1:]:
        name, equals, value = parameter.partition("=")
        if equals and name.strip().lower() == "charset":
            return value.strip().strip('"').strip() or None
    return None
