"""Schemas of the consent page's API and of the connected agents list."""

from __future__ import annotations

from marshmallow import fields, validate

from lookout.schema.accounts import StrictSchema

MAX_QUERY = 8192
SCOPE_NAMES = ("verbs:read", "jobs:read")  # access/oauth_models.SCOPES describes them


class DecisionSchema(StrictSchema):
    """POST /api/oauth/authorize: the person's answer to one authorization request."""

    query = fields.String(required=True, validate=validate.Length(min=1, max=MAX_QUERY))
    allow = fields.Boolean(required=True)
    workspace_id = fields.UUID(load_default=None, allow_none=True)
    scopes = fields.List(
        fields.String(validate=validate.OneOf(SCOPE_NAMES)),
        load_default=list,
        validate=validate.Length(max=len(SCOPE_NAMES)),
    )


class GrantSchema(StrictSchema):
    id = fields.UUID(required=True)
    client_id = fields.String(required=True)
    client_name = fields.String(allow_none=True)
    client_uri = fields.String(allow_none=True)
    client_kind = fields.String(required=True)
    scopes = fields.Method("scope_names")
    granted_by = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    last_used_at = fields.DateTime(allow_none=True)
    revoked_at = fields.DateTime(allow_none=True)

    def scope_names(self, grant: object) -> list[str]:
        granted = str(getattr(grant, "scope", "")).split()
        return [name for name in SCOPE_NAMES if name in granted]
