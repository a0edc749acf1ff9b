"""Schemas of the MCP connector routes. Unknown keys are rejected, every string is bounded, and
header values never appear in an answer."""

from __future__ import annotations

import re

from marshmallow import ValidationError, fields, validate

from lookout.schema import strict

MAX_HEADERS = 20
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
# The transport sets these itself; a connector must not be able to bend the exchange.
_RESERVED = frozenset(
    {"host", "content-length", "content-type", "accept", "connection", "transfer-encoding",
     "te", "upgrade", "mcp-session-id", "mcp-protocol-version", "last-event-id"}
)  # fmt: skip


StrictSchema = strict.StrictSchema  # the one definition: lookout.schema.strict


load = strict.load


def _header_name(name: str) -> None:
    if not _TOKEN.match(name):
        raise ValidationError("Not a valid HTTP header name.")
    if name.lower() in _RESERVED:
        raise ValidationError(f"{name} is set by Lookout itself.")


def _no_credentials_in_url(url: str) -> None:
    if "@" in url.split("//", 1)[-1].split("/", 1)[0]:
        raise ValidationError("Put credentials in headers, not in the URL's user and password.")


_CHAT_USE = (
    "Whether the chat agent may call this connector's tools (all of them while someone chats; "
    "only those the server marks readOnlyHint in scheduled turns). New connectors: false."
)


class NewConnectorSchema(StrictSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    url = fields.Url(
        required=True,
        schemes={"http", "https"},
        require_tld=False,
        validate=[validate.Length(max=2048), _no_credentials_in_url],
        metadata={"description": "The server's Streamable HTTP endpoint, e.g. https://…/mcp."},
    )
    headers = fields.Dict(
        keys=fields.String(validate=_header_name),
        values=fields.String(
            validate=[validate.Length(max=8192), validate.Regexp(r"^[^\r\n\x00]*$")]
        ),
        load_default=dict,
        validate=validate.Length(max=MAX_HEADERS),
        metadata={"description": "Sent with every request (e.g. Authorization); stored sealed."},
    )
    chat_use = fields.Boolean(load_default=False, metadata={"description": _CHAT_USE})


class ConnectorSchema(StrictSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    url = fields.String(
        required=True,
        metadata={"description": "Scheme and host only: the whole URL is stored sealed."},
    )
    enabled = fields.Boolean(required=True)
    chat_use = fields.Boolean(required=True, metadata={"description": _CHAT_USE})
    created_at = fields.DateTime(required=True)
    headers = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        metadata={"description": "Header names; their values are never shown."},
    )
    headers_readable = fields.Boolean(
        metadata={"description": "False when LOOKOUT_SECRET_KEY changed since: re-create it."}
    )


class ConnectorPatchSchema(StrictSchema):
    chat_use = fields.Boolean(required=True, metadata={"description": _CHAT_USE})


class ToolSchema(StrictSchema):
    """A tool as the connector's server described it."""

    name = fields.String(required=True)
    title = fields.String(allow_none=True)
    description = fields.String(allow_none=True)
    input_schema = fields.Dict(attribute="inputSchema", data_key="inputSchema")


class TestedSchema(StrictSchema):
    connector = fields.Nested(ConnectorSchema, required=True)
    tools = fields.List(fields.Nested(ToolSchema), required=True)
