"""Schemas of the account routes: sign-up, sign-in, who am I, API keys. Unknown keys are rejected
and every string is bounded."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from lookout.schema import strict

# The API's own vocabulary, owned here (layer 2) and used by lookout.access.keys and
# lookout.access.passwords, so a schema never imports the layer above it.
PASSWORD_MIN_LENGTH = 10
PASSWORD_MAX_LENGTH = 1024
# A key's scope, chosen when it is made. `full`: what its creator may do now (an owner's key
# acts as an editor: keys never manage the workspace). `read-only`: a viewer's rights, at most:
# it reads, and never spends credits, starts or changes a watch, or touches keys.
SCOPE_FULL = "full"
SCOPE_READ_ONLY = "read-only"
SCOPES = (SCOPE_FULL, SCOPE_READ_ONLY)


def scope_of(scopes: list[str]) -> str:
    """The scope stored in `api_keys.scopes` (keys made before scopes existed are full)."""
    return SCOPE_READ_ONLY if SCOPE_READ_ONLY in scopes else SCOPE_FULL


MAX_EMAIL = 254
MAX_KEY_NAME = 100
MAX_KEY_RATE = 100_000
MAX_INVITE_TOKEN = 100
_SCOPE_HELP = (
    "full: what the key's creator may do now (at most an editor's rights); read-only: reads "
    "only, never spends credits, starts or changes watches. A key acts with its creator's "
    "current role: it stops working when they leave the workspace."
)


StrictSchema = strict.StrictSchema  # the one definition: lookout.schema.strict


load = strict.load


def _email() -> fields.Email:
    return fields.Email(required=True, validate=validate.Length(max=MAX_EMAIL))


class SignupSchema(StrictSchema):
    email = _email()
    password = fields.String(
        required=True,
        validate=validate.Length(min=PASSWORD_MIN_LENGTH, max=PASSWORD_MAX_LENGTH),
    )
    invite = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=MAX_INVITE_TOKEN),
        metadata={"description": "An invite's token (LOOKOUT_SIGNUP=invite): join its workspace."},
    )


class LoginSchema(StrictSchema):
    email = _email()
    # No minimum here: a short password is simply wrong, and says so like any other.
    password = fields.String(
        required=True, validate=validate.Length(min=1, max=PASSWORD_MAX_LENGTH)
    )


class NewKeySchema(StrictSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=MAX_KEY_NAME))
    rate_limit_per_minute = fields.Integer(
        load_default=None, allow_none=True, validate=validate.Range(min=1, max=MAX_KEY_RATE)
    )
    scope = fields.String(
        load_default=SCOPE_FULL,
        validate=validate.OneOf(SCOPES),
        metadata={"description": _SCOPE_HELP},
    )


class UserSchema(StrictSchema):
    id = fields.UUID(required=True)
    email = fields.String(required=True)


class WorkspaceSchema(StrictSchema):
    """A workspace as its member sees it: their role and its credit balance."""

    id = fields.UUID(required=True)
    name = fields.String(required=True)
    role = fields.String(required=True)
    balance = fields.Integer(required=True)


class AccountSchema(StrictSchema):
    user = fields.Nested(UserSchema, required=True)
    workspace = fields.Nested(WorkspaceSchema, required=True)


class SignedInSchema(StrictSchema):
    user = fields.Nested(UserSchema, required=True)


class MeSchema(StrictSchema):
    auth = fields.String(required=True, metadata={"description": "session or api_key"})
    user = fields.Nested(UserSchema, allow_none=True, required=True)
    workspaces = fields.List(fields.Nested(WorkspaceSchema), required=True)
    workspace = fields.Nested(WorkspaceSchema, required=True)


class ApiKeySchema(StrictSchema):
    """A key as listed: never its hash, never its text."""

    id = fields.UUID(required=True)
    name = fields.String(required=True)
    prefix = fields.String(required=True)
    scope = fields.Method(
        "_scope", metadata={"type": "string", "enum": list(SCOPES), "description": _SCOPE_HELP}
    )
    rate_limit_per_minute = fields.Integer(allow_none=True)
    created_at = fields.AwareDateTime(required=True)
    last_used_at = fields.AwareDateTime(allow_none=True)
    revoked_at = fields.AwareDateTime(allow_none=True)

    def _scope(self, key: Any) -> str:
        return scope_of(self.get_attribute(key, "scopes", []))


class CreatedKeySchema(ApiKeySchema):
    key = fields.String(
        required=True, metadata={"description": "The key text, shown this once only."}
    )


class NewInviteSchema(StrictSchema):
    email = _email()
    role = fields.String(load_default="editor", validate=validate.OneOf(["editor", "viewer"]))


class InviteSchema(StrictSchema):
    """An open invite as its workspace's owner sees it: never its token."""

    id = fields.UUID(required=True)
    email = fields.String(required=True)
    role = fields.String(required=True)
    created_at = fields.AwareDateTime(required=True)
    expires_at = fields.AwareDateTime(required=True)


class CreatedInviteSchema(StrictSchema):
    invite = fields.Nested(InviteSchema, required=True)
    token = fields.String(required=True, metadata={"description": "Shown this once only."})
    url = fields.String(
        required=True, metadata={"description": "The sign-up link to send to the invited email."}
    )
