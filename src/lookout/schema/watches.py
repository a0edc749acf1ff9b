"""Bodies of the watch routes."""

from __future__ import annotations

import marshmallow
from marshmallow import fields, validate

from lookout.schema import strict


class NewWatch(strict.StrictSchema):
    chat_id = fields.UUID(required=True)
    message = fields.String(required=True, validate=validate.Length(min=1, max=2000))
    cadence = fields.String(required=True, validate=validate.Length(max=100))
    timezone = fields.String(load_default="UTC", validate=validate.Length(max=64))
    condition = fields.Nested(lambda: ConditionSchema(), load_default=None, allow_none=True)


CONDITION_KINDS = ("below", "above", "mentions", "absent", "new_items", "in_stock", "changes_by",
                   "any")  # fmt: skip
# A condition outside the kinds, in words ("if the menu gets more vegetarian"): judged by the
# model when one is configured, else read as `any`.
CUSTOM = "custom"
_NEEDS_VALUE = ("below", "above", "changes_by")
_NEEDS_TEXT = ("mentions", "absent", CUSTOM)


class ConditionSchema(strict.StrictSchema):
    """What a watch tells about: `{kind, value, text, unit}`."""

    kind = fields.String(required=True, validate=validate.OneOf((*CONDITION_KINDS, CUSTOM)))
    value = fields.Float(
        load_default=None, allow_none=True, allow_nan=False,
        validate=validate.Range(min=-1e15, max=1e15),
        metadata={"description": "The number of below / above, the percentage of changes_by."},
    )  # fmt: skip
    text = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(min=1, max=200),
        metadata={"description": "The text of mentions / absent, the subject of a number, the "
                  "kind of new items, or a custom condition in words."},
    )  # fmt: skip
    unit = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=8),
        metadata={"description": "A currency code (EUR, USD…) or %."},
    )  # fmt: skip

    @marshmallow.validates_schema
    def _complete(self, data: dict[str, object], **kwargs: object) -> None:
        if data["kind"] in _NEEDS_VALUE and data.get("value") is None:
            raise marshmallow.ValidationError(f"{data['kind']} needs a value.", "value")
        if data["kind"] in _NEEDS_TEXT and not data.get("text"):
            raise marshmallow.ValidationError(f"{data['kind']} needs a text.", "text")


class WatchEdit(strict.StrictSchema):
    """A PATCH of a watch: only the keys sent change; the watch is edited in place."""

    message = fields.String(validate=validate.Length(min=1, max=2000))
    cadence = fields.String(validate=validate.Length(min=1, max=100))
    timezone = fields.String(validate=validate.Length(min=1, max=64))
    condition = fields.Nested(ConditionSchema, allow_none=True)
    enabled = fields.Boolean()
