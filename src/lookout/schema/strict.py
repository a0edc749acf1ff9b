"""The one strict schema and the one way a door loads input with it.

Every input schema rejects unknown keys (StrictSchema); `load` turns marshmallow's errors into
InvalidInput naming every field to fix. The other schema modules name these (and only these).
"""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError

from lookout import errors


class StrictSchema(Schema):
    class Meta:
        unknown = RAISE


def load(schema: Schema, raw: Any) -> dict[str, Any]:
    """Validate `raw`; InvalidInput names every field to fix."""
    try:
        data: dict[str, Any] = schema.load(raw)
    except ValidationError as exc:
        raise errors.InvalidInput(fields=exc.messages) from None
    return data
