"""Bodies and answers of the feed and export / import routes. Unknown keys are refused, except
inside a changedetection.io file, whose keys watches/imports.py reads deliberately."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from lookout.schema import watches as watch_schemas

EXPORT_FORMAT = "lookout.watches"
SOURCES = ("lookout", "changedetection.io")
MAX_WATCHES = 500
MAX_TAGS = 20
MAX_TAG = 50
MAX_TITLE = 200


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class NewFeedSchema(_Strict):
    watch_id = fields.UUID(
        load_default=None, allow_none=True,
        metadata={"description": "One watch's feed; omitted or null: the workspace's feed. "
                  "Asking again for the same one rotates its URL (the old one stops)."},
    )  # fmt: skip


class FeedSchema(_Strict):
    id = fields.UUID(required=True)
    watch_id = fields.UUID(required=True, allow_none=True,
                           metadata={"description": "null: the workspace's feed"})  # fmt: skip
    prefix = fields.String(required=True, metadata={"description": "The token's first letters"})
    created_at = fields.AwareDateTime(required=True)
    rotated_at = fields.AwareDateTime(required=True)
    last_used_at = fields.AwareDateTime(required=True, allow_none=True)


class FeedList(_Strict):
    feeds = fields.List(fields.Nested(FeedSchema), required=True)


class CreatedFeed(_Strict):
    feed = fields.Nested(FeedSchema, required=True)
    url = fields.String(
        required=True,
        metadata={"description": "The feed's secret URL, shown this once (Lookout keeps only "
                  "its hash)"},
    )  # fmt: skip


class ExportedWatch(_Strict):
    title = fields.String(load_default="", validate=validate.Length(max=MAX_TITLE))
    message = fields.String(required=True, validate=validate.Length(min=1, max=2000))
    cadence = fields.String(required=True, validate=validate.Length(min=1, max=100))
    timezone = fields.String(load_default="UTC", validate=validate.Length(min=1, max=64))
    enabled = fields.Boolean(load_default=True)
    tags = fields.List(
        fields.String(validate=validate.Length(max=MAX_TAG)), load_default=list,
        validate=validate.Length(max=MAX_TAGS),
    )  # fmt: skip
    condition = fields.Nested(watch_schemas.ConditionSchema, load_default=None, allow_none=True)
    notify = fields.Boolean(load_default=False, metadata={"description": "Notifications on"})


class ExportSchema(_Strict):
    """A workspace's watches as a file: import it into any Lookout workspace."""

    format = fields.String(required=True, validate=validate.Equal(EXPORT_FORMAT))
    version = fields.Integer(required=True, validate=validate.Equal(1))
    exported_at = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=40)
    )
    watches = fields.List(
        fields.Nested(ExportedWatch), required=True,
        validate=validate.Length(max=MAX_WATCHES),
    )  # fmt: skip


class ImportSchema(_Strict):
    source = fields.String(
        required=True, validate=validate.OneOf(SOURCES),
        metadata={"description": "lookout: a file from this export; changedetection.io: the "
                  "url-watches.json of its backup"},
    )  # fmt: skip
    file = fields.Dict(required=True, metadata={"description": "The file's JSON"})


class ImportedWatch(_Strict):
    watch_id = fields.UUID(required=True)
    chat_id = fields.UUID(required=True)
    title = fields.String(required=True)
    cadence = fields.String(required=True)
    tags = fields.List(fields.String(), required=True)


class Imported(_Strict):
    created = fields.List(fields.Nested(ImportedWatch), required=True)
    ignored_keys = fields.List(
        fields.String(), required=True,
        metadata={"description": "Keys of the file Lookout does not map (left out on purpose)"},
    )  # fmt: skip
