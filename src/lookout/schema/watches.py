"""Bodies of the watch routes."""

from __future__ import annotations

import marshmallow
from marshmallow import fields, validate


class NewWatch(marshmallow.Schema):
    class Meta:
        unknown = marshmallow.RAISE

    chat_id = fields.UUID(required=True)
    message = fields.String(required=True, validate=validate.Length(min=1, max=2000))
    cadence = fields.String(required=True, validate=validate.Length(max=100))
    timezone = fields.String(load_default="UTC", validate=validate.Length(max=64))
