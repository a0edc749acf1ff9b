"""Schemas of the notification routes. Unknown keys are rejected and a target's URL is only ever
shown as scheme and host."""

from __future__ import annotations

from marshmallow import fields, validate

from lookout.notify import prefs
from lookout.schema import strict
from lookout.schema import watches as watches_schema

StrictSchema = strict.StrictSchema  # the one definition: lookout.schema.strict


class NewTargetSchema(StrictSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    url = fields.String(
        required=True,
        validate=validate.Length(min=3, max=2048),
        metadata={
            "description": "An Apprise URL (slack://…, discord://…, tgram://…, ntfy://…, "
            "mailtos://…, matrixs://…, json://…) or an https:// URL for a signed webhook. "
            "Stored sealed; only its scheme and host are shown."
        },
    )
    default = fields.Boolean(
        load_default=False,
        metadata={"description": "Watches that chose no target notify the default one."},
    )
    secret = fields.String(
        load_default=None,
        validate=validate.Length(min=16, max=200),
        metadata={"description": "Webhooks: the HMAC key; when omitted Lookout makes one and "
                  "answers it once."},
    )  # fmt: skip


class TargetChangeSchema(StrictSchema):
    default = fields.Boolean(
        required=True,
        metadata={"description": "true: this target becomes the workspace's default (the old "
                  "default stops being one); false: no default any more."},
    )  # fmt: skip


class TargetSchema(StrictSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, metadata={"description": "apprise or webhook"})
    url = fields.String(required=True, metadata={"description": "Scheme and host only."})
    default = fields.Boolean(required=True)
    signed = fields.Boolean(required=True)
    created_at = fields.DateTime(required=True)


class WatchNotifySchema(StrictSchema):
    """A PATCH of a watch's notification settings: only the keys sent change."""

    enabled = fields.Boolean()
    targets = fields.List(
        fields.UUID(),
        allow_none=True,
        validate=validate.Length(max=prefs.MAX_TARGETS),
        metadata={"description": "Target ids; null = the workspace's default target."},
    )
    compared_versions = fields.Integer(
        validate=validate.Range(min=1, max=prefs.MAX_COMPARED),
        metadata={"description": "Report a change only when the page differs from each of "
                  "its last N versions (2 silences a page flipping between two states)."},
    )  # fmt: skip


class WatchPatchSchema(StrictSchema):
    notify = fields.Nested(WatchNotifySchema, required=True)


class WatchChangeSchema(watches_schema.WatchEdit):
    """A PATCH of a watch: message, cadence, timezone, condition, enabled and its notification
    settings (`notify`); only the keys sent change, in place."""

    notify = fields.Nested(WatchNotifySchema)
