"""The OpenAPI operations of issue #27's routes: making a target the default, feeds, and the
export / import of watches (merged into openapi_paths.paths())."""

from __future__ import annotations

from typing import Any

from lookout.notify import schema as notify_schema
from lookout.routes import responses
from lookout.routes.openapi_ops import FAILURE, path_param, plain
from lookout.schema import portability as schema

_WS = path_param("ws")
_FEED_ID, _FEED_TOKEN = path_param("feed_id"), path_param("feed_token")
_ATOM = {
    "description": "The Atom 1.0 feed: the newest changes the watches found and conditions "
    "that became true, newest first",
    "content": {"application/atom+xml": {"schema": {"type": "string"}}},
}


def paths() -> dict[str, dict[str, Any]]:
    ws = "/api/workspaces/{ws}"
    return {
        ws + "/notification-targets/{target_id}": {
            "patch": plain(
                "targets_update", "Make a target the workspace's default (or not)",
                tag="notifications", body=notify_schema.TargetChangeSchema,
                data=responses.CreatedTarget,
            ),
        },
        ws + "/feeds": {
            "parameters": [_WS],
            "get": plain("feeds_list", "The workspace's feeds (never their secret URLs)",
                         tag="notifications", data=schema.FeedList),
            "post": plain(
                "feeds_create", "Make the Atom feed URL of the workspace or of one watch, or "
                "rotate it (the URL is shown this once)", tag="notifications", status="201",
                body=schema.NewFeedSchema, data=schema.CreatedFeed,
            ),
        },
        ws + "/feeds/{feed_id}": {
            "parameters": [_WS, _FEED_ID],
            "delete": plain("feeds_revoke", "Revoke a feed: its URL stops at once",
                            tag="notifications", data=responses.Deleted),
        },
        "/feeds/{feed_token}": {
            "parameters": [_FEED_TOKEN],
            "get": plain(
                "feeds_read", "Read a feed (the secret URL is the credential)",
                tag="notifications", secured=False, data=None,
                responses={"200": _ATOM, "default": FAILURE},
            ),
        },
        ws + "/watches/export": {
            "parameters": [_WS],
            "get": plain("watches_export", "The workspace's watches as a file to import",
                         tag="watches", data=schema.ExportSchema),
        },
        ws + "/watches/import": {
            "parameters": [_WS],
            "post": plain(
                "watches_import", "Create watches from a Lookout export or from a "
                "changedetection.io backup's url-watches.json, each in a new chat",
                tag="watches", status="201", body=schema.ImportSchema, data=schema.Imported,
            ),
        },
    }  # fmt: skip
