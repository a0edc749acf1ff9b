"""The watches page and a watch's history of checks: request bodies, queries, typed answers
(additionalProperties false, as schema.responses) and their OpenAPI operations."""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, fields, validate

from lookout.routes import responses
from lookout.routes.openapi_ops import number, path_param, plain
from lookout.schema import portability as portability_schema
from lookout.schema import watches as watch_schemas

ACTIONS = ("run", "pause", "resume", "stop")
MAX_BULK = 100
MAX_CHECKS = 200
MAX_TAG = portability_schema.MAX_TAG


class _In(Schema):
    class Meta:
        unknown = RAISE


class Bulk(_In):
    action = fields.String(required=True, validate=validate.OneOf(ACTIONS))
    ids = fields.List(fields.UUID(), required=True, validate=validate.Length(min=1, max=MAX_BULK))


class WatchesQuery(_In):
    tag = fields.String(load_default=None, validate=validate.Length(min=1, max=MAX_TAG))


class HistoryQuery(_In):
    before = fields.AwareDateTime(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_CHECKS))


class CheckQuery(_In):
    against = fields.UUID(load_default=None)


class PrefsChange(_In):
    timezone = fields.String(validate=validate.Length(min=1, max=64))
    history_retention_days = fields.Integer(validate=validate.Range(min=1, max=3650))


_Out = responses._Out  # unknown keys refused


def _text(*, nullable: bool = False, description: str | None = None) -> fields.String:
    meta = {"description": description} if description else {}
    return fields.String(required=True, allow_none=nullable, metadata=meta)


def _when(*, nullable: bool = False) -> fields.AwareDateTime:
    return fields.AwareDateTime(required=True, allow_none=nullable)


class WatchRow(_Out):
    """A row of the watches page."""

    id = fields.UUID(required=True)
    chat_id = fields.UUID(required=True)
    chat_title = _text()
    message = _text(description="The watched question")
    url = _text(nullable=True, description="The watched page (null: a search or a place)")
    page_title = _text(nullable=True, description="The page's title at the last check")
    cadence = _text(description="5-field cron, in `timezone`")
    timezone = _text(description="IANA time zone of the cadence")
    schedule = _text(description="The cadence in words")
    condition = fields.Nested(watch_schemas.ConditionSchema, required=True, allow_none=True)
    condition_words = _text(nullable=True)
    enabled = fields.Boolean(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(("ok", "paused", "failing", "out_of_credits"))
    )
    last_error = _text(nullable=True)
    last_checked_at = _when(nullable=True)
    last_changed_at = _when(nullable=True)
    next_run_at = _when(nullable=True)
    tags = fields.List(
        fields.String(), required=True,
        metadata={"description": "Its tags (from an import, changedetection.io's included)"},
    )  # fmt: skip


class WatchRows(_Out):
    watches = fields.List(fields.Nested(WatchRow), required=True)


class BulkOutcome(_Out):
    id = fields.UUID(required=True)
    ok = fields.Boolean(required=True)
    error = fields.Dict(required=True, allow_none=True)
    run_id = fields.UUID(
        required=True, allow_none=True,
        metadata={"description": "The check a run queued (null otherwise): "
                  "GET /api/automations/{id}/runs/{run_id} says when it is done"},
    )  # fmt: skip


class BulkOutcomes(_Out):
    action = _text()
    results = fields.List(fields.Nested(BulkOutcome), required=True)


class Check(_Out):
    id = fields.UUID(required=True)
    checked_at = _when(nullable=True)
    scheduled_for = _when(nullable=True)
    manual = fields.Boolean(required=True)
    status = _text()
    error = _text(nullable=True)
    changed = fields.Boolean(required=True)
    compared = fields.Boolean(required=True, metadata={"description": "false: a first look"})
    condition_met = fields.Boolean(required=True, allow_none=True)
    credits = fields.Integer(required=True, allow_none=True)
    pages = fields.Integer(required=True, metadata={"description": "Pages kept of this check"})


class Pruned(_Out):
    before = _when()
    days = fields.Integer(required=True)
    text = _text()


class History(_Out):
    watch = fields.Nested(responses.Watch, required=True)
    checks = fields.List(fields.Nested(Check), required=True)
    pruned = fields.Nested(Pruned, required=True, allow_none=True)
    next_before = _when(nullable=True)


class PageDiff(_Out):
    changed = fields.Boolean(required=True)
    modified = fields.List(fields.Nested(responses.ChangedLine), required=True)
    added = fields.List(fields.String(), required=True)
    removed = fields.List(fields.String(), required=True)
    moved = fields.List(fields.Nested(responses.ChangedLine), required=True)
    counts = fields.Nested(responses.ChangeCounts, required=True)
    lines = fields.List(fields.String(), required=True, metadata={"description": "In words"})


class CheckPage(_Out):
    url = _text(description="The page, or the search (verb and arguments) of a results watch")
    title = _text()
    kind = fields.String(
        required=True, validate=validate.OneOf(("page", "items")),
        metadata={"description": "page: a page's content; items: a search's or maps results"},
    )  # fmt: skip
    digest = _text(description="sha-256 of the content")
    size = fields.Integer(required=True)
    content = _text(
        description="The page's main content (markdown) at this check, or the results, one a line"
    )
    diff = fields.Nested(PageDiff, required=True, allow_none=True)


class CheckDetail(_Out):
    check = fields.Nested(Check, required=True)
    against = fields.Nested(Check, required=True, allow_none=True)
    pages = fields.List(fields.Nested(CheckPage), required=True)


class Prefs(_Out):
    timezone = _text(description="The default IANA time zone of new watches")
    history_retention_days = fields.Integer(required=True)


_WATCH_ID, _RUN_ID, _WS = path_param("automation_id"), path_param("run_id"), path_param("ws")
_BEFORE = {"name": "before", "in": "query", "required": False,
           "schema": {"type": "string", "format": "date-time"},
           "description": "Checks before this time (a page's `next_before`)"}  # fmt: skip
_TAG = {"name": "tag", "in": "query", "required": False,
        "schema": {"type": "string", "maxLength": MAX_TAG},
        "description": "Only the watches with this tag (case and spaces aside)"}  # fmt: skip
_AGAINST = {"name": "against", "in": "query", "required": False,
            "schema": {"type": "string", "format": "uuid"},
            "description": "Compare with this check (default: the previous one)"}  # fmt: skip


def paths() -> dict[str, dict[str, Any]]:
    return {
        "/api/watches": {"get": plain(
            "watches_board", "Every watch of the workspace with its status, last check and "
            "last change", tag="watches", data=WatchRows, parameters=(_TAG,),
        )},
        "/api/watches/bulk": {"post": plain(
            "watches_bulk", "Run, pause, resume or stop many watches", tag="watches",
            body=Bulk, data=BulkOutcomes,
        )},
        "/api/automations/{automation_id}/history": {
            "parameters": [_WATCH_ID],
            "get": plain("watches_history", "A watch's checks, newest first, and what "
                         "retention pruned", tag="watches", data=History,
                         parameters=(_BEFORE, number("limit", "At most this many (default 50)",
                                                     least=1, most=MAX_CHECKS))),
        },
        "/api/automations/{automation_id}/history/{run_id}": {
            "parameters": [_WATCH_ID, _RUN_ID],
            "get": plain("watches_check", "The pages a check read, as they were, with the diff "
                         "against another check", tag="watches", data=CheckDetail,
                         parameters=(_AGAINST,)),
        },
        "/api/workspaces/{ws}/watch-settings": {
            "parameters": [_WS],
            "get": plain("watch_settings_get", "The workspace's default time zone and history "
                         "retention", tag="watches", data=Prefs),
            "patch": plain("watch_settings_update", "Change the default time zone or the "
                           "retention", tag="watches", body=PrefsChange, data=Prefs),
        },
    }  # fmt: skip
