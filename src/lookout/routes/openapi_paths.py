"""Every /api and non-verb /v1 route of the OpenAPI document: its operationId, tag, body and the
typed `data` it answers (tests/integration/test_rest_door.py holds the served and documented
routes equal)."""

from __future__ import annotations

from typing import Any

from lookout.capabilities import registry
from lookout.chat import chats as chat_pages
from lookout.notify import schema as notify_schema
from lookout.routes import openapi_board, openapi_portability, responses
from lookout.routes.openapi_ops import FAILURE, NO_CONTENT, number, path_param, plain, stream
from lookout.schema import accounts, chats, connectors, watches
from lookout.schema import oauth as oauth_schema

TAGS = [
    {"name": "verbs", "description": "The verbs and their schemas"},
    {"name": "jobs", "description": "Slow verb calls, run as jobs"},
    {"name": "usage", "description": "Balance and usage"},
    {"name": "auth", "description": "Sign-up, sign-in, who am I"},
    {"name": "keys", "description": "A workspace's API keys and invites"},
    {"name": "connectors", "description": "Remote MCP servers the chat agent may use"},
    {"name": "notifications", "description": "Where watches send what changed"},
    {"name": "chats", "description": "Chats, their messages and their live streams"},
    {"name": "watches", "description": "Chats re-asked on a schedule"},
    {"name": "oauth", "description": "Agents connected over OAuth 2.1 (MCP): consent and revoke"},
]
# An OAuth authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707), as the client sent it.
_AUTHORIZATION_QUERY = [
    {"name": name, "in": "query", "required": False, "schema": {"type": "string"}}
    for name in ("response_type", "client_id", "redirect_uri", "state", "scope",
                 "code_challenge", "code_challenge_method", "resource")
]  # fmt: skip

_JOB_ID, _WS, _KEY_ID = path_param("job_id"), path_param("ws"), path_param("key_id")
_CHAT_ID, _WATCH_ID = path_param("chat_id"), path_param("automation_id")
_CONNECTOR_ID, _TARGET_ID = path_param("connector_id"), path_param("target_id")
_INVITE_ID, _RUN_ID = path_param("invite_id"), path_param("run_id")
_GRANT_ID = path_param("grant_id")
_LIMIT = number("limit", "At most this many (default 50)", least=1, most=chat_pages.MAX_PAGE)
_LAST_EVENT_ID = {
    "name": "Last-Event-ID",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "Resume after this event (the `id:` of the last one received)",
}
_MESSAGE = {
    "oneOf": [
        registry.json_schema_of(chats.TextMessage),
        registry.json_schema_of(chats.UseChatBody),
    ]
}


def _auth() -> dict[str, dict[str, Any]]:
    return {
        "/api/auth/signup": {"post": plain(
            "auth_signup", "Create an account", tag="auth", secured=False, status="201",
            body=accounts.SignupSchema, data=accounts.AccountSchema,
        )},
        "/api/auth/login": {"post": plain(
            "auth_login", "Sign in (sets the session cookie)", tag="auth", secured=False,
            body=accounts.LoginSchema, data=accounts.SignedInSchema,
        )},
        "/api/auth/logout": {"post": plain(
            "auth_logout", "Sign out", tag="auth", data=responses.SignedOut
        )},
        "/api/auth/logout-everywhere": {"post": plain(
            "auth_logout_everywhere", "Sign out everywhere: end every session of the user",
            tag="auth", data=responses.SignedOutEverywhere,
        )},
        "/api/me": {"get": plain(
            "auth_me", "The current user, workspaces, role and balance", tag="auth",
            data=accounts.MeSchema,
        )},
    }  # fmt: skip


def _v1() -> dict[str, dict[str, Any]]:
    return {
        "/v1/verbs": {"get": plain(
            "verbs_list", "List the verbs with their schemas and prices", tag="verbs",
            secured=False, data=responses.VerbList,
        )},
        "/v1/jobs/{job_id}": {
            "parameters": [_JOB_ID],
            "get": plain(
                "jobs_get", "A job's status, progress and (once finished) result envelope",
                tag="jobs", data=responses.Job,
            ),
            "delete": plain("jobs_cancel", "Cancel a job", tag="jobs", data=responses.Job),
        },
        "/v1/jobs/{job_id}/artifacts/{artifact_id}": {
            "parameters": [_JOB_ID, path_param("artifact_id")],
            "get": plain(
                "jobs_artifact_get", "A file of a job's result (a web.scrape screenshot)",
                tag="jobs", data=None, responses={
                    "200": {"description": "The file: a PNG screenshot, as long as its job is kept",
                            "content": {"image/png": {"schema": {"type": "string",
                                                                 "format": "binary"}}}},
                    "default": FAILURE,
                },
            ),
        },
        "/v1/usage": {"get": plain(
            "usage_get", "Balance, recent ledger and per-verb totals", tag="usage",
            data=responses.Usage,
        )},
    }  # fmt: skip


def _workspace() -> dict[str, dict[str, Any]]:
    keys, mcp = "/api/workspaces/{ws}/keys", "/api/workspaces/{ws}/mcp-connectors"
    invites = "/api/workspaces/{ws}/invites"
    targets = "/api/workspaces/{ws}/notification-targets"
    return {
        keys: {
            "parameters": [_WS],
            "get": plain("keys_list", "List the workspace's API keys", tag="keys",
                         data=responses.KeyList),
            "post": plain("keys_create", "Create an API key (its text is shown once)", tag="keys",
                          status="201", body=accounts.NewKeySchema,
                          data=accounts.CreatedKeySchema),
        },
        invites: {
            "parameters": [_WS],
            "get": plain("invites_list", "List the workspace's open invites (owners)",
                         tag="keys", data=responses.InviteList),
            "post": plain(
                "invites_create",
                "Invite an email to sign up into the workspace (owners; the link is shown once)",
                tag="keys", status="201", body=accounts.NewInviteSchema,
                data=accounts.CreatedInviteSchema,
            ),
        },
        # OAuth 2.1 for MCP connectors: the consent page's API and the connected agents (the
        # authorization server's own endpoints are in /.well-known/oauth-authorization-server).
        "/api/oauth/authorize": {
            "get": plain(
                "oauth_consent_get", "What an authorization request (its query, as sent to "
                "/authorize) asks the signed-in person: the client, the scopes, their workspaces",
                tag="oauth", secured=False, parameters=tuple(_AUTHORIZATION_QUERY),
                data=responses.Consent,
            ),
            "post": plain(
                "oauth_consent_decide",
                "Allow or deny an authorization request; answers where to send the browser",
                tag="oauth", secured=False, body=oauth_schema.DecisionSchema,
                data=responses.ConsentDecision,
            ),
        },
        "/api/workspaces/{ws}/oauth-agents": {
            "parameters": [_WS],
            "get": plain("oauth_agents_list", "List the agents connected to the workspace over "
                         "OAuth", tag="oauth", data=responses.AgentList),
        },
        "/api/workspaces/{ws}/oauth-agents/{grant_id}": {
            "parameters": [_WS, _GRANT_ID],
            "delete": plain("oauth_agents_revoke", "Revoke a connected agent (its tokens stop "
                            "working at once)", tag="oauth", data=responses.RevokedAgent),
        },
        invites + "/{invite_id}": {
            "parameters": [_WS, _INVITE_ID],
            "delete": plain("invites_revoke", "Revoke an invite (owners)", tag="keys",
                            data=responses.Revoked),
        },
        keys + "/{key_id}": {
            "parameters": [_WS, _KEY_ID],
            "delete": plain("keys_revoke", "Revoke an API key", tag="keys",
                            data=responses.RevokedKey),
        },
        mcp: {
            "parameters": [_WS],
            "get": plain("connectors_list", "List the workspace's MCP connectors",
                         tag="connectors", data=responses.ConnectorList),
            "post": plain(
                "connectors_create",
                "Add an MCP connector (a remote MCP server whose tools the chat agent may call)",
                tag="connectors", status="201", body=connectors.NewConnectorSchema,
                data=responses.CreatedConnector,
            ),
        },
        mcp + "/{connector_id}": {
            "parameters": [_WS, _CONNECTOR_ID],
            "delete": plain("connectors_delete", "Remove an MCP connector", tag="connectors",
                            data=responses.Deleted),
            "patch": plain(
                "connectors_update",
                "Mark an MCP connector for chat use (the chat agent may call its tools) or "
                "unmark it", tag="connectors", body=connectors.ConnectorPatchSchema,
                data=responses.CreatedConnector,
            ),
        },
        mcp + "/{connector_id}/test": {
            "parameters": [_WS, _CONNECTOR_ID],
            "post": plain("connectors_test", "Connect to an MCP connector and list its tools",
                          tag="connectors", data=connectors.TestedSchema),
        },
        targets: {
            "parameters": [_WS],
            "get": plain("targets_list", "List the workspace's notification targets",
                         tag="notifications", data=responses.TargetList),
            "post": plain(
                "targets_create",
                "Add a notification target (an Apprise URL, or an http(s) URL for signed webhooks)",
                tag="notifications", status="201", body=notify_schema.NewTargetSchema,
                data=responses.CreatedTarget,
            ),
        },
        targets + "/{target_id}": {
            "parameters": [_WS, _TARGET_ID],
            "delete": plain("targets_delete", "Remove a notification target",
                            tag="notifications", data=responses.Deleted),
        },
        targets + "/{target_id}/test": {
            "parameters": [_WS, _TARGET_ID],
            "post": plain("targets_test", "Send a test notification to a target",
                          tag="notifications", data=responses.TestedTarget),
        },
    }  # fmt: skip


def _chats() -> dict[str, dict[str, Any]]:
    return {
        "/api/chats": {
            "get": plain(
                "chats_list",
                "List the workspace's chats, the most recently active first, with their watches",
                tag="chats", parameters=(_LIMIT, number("offset", "Skip this many")),
                data=responses.ChatPage,
            ),
            "post": plain("chats_create", "Create a chat", tag="chats", status="201",
                          body=chats.NewChat, data=responses.Chat),
        },
        "/api/chats/{chat_id}": {
            "parameters": [_CHAT_ID],
            "get": plain("chats_get", "A chat and its watch", tag="chats", data=responses.Chat),
            "patch": plain("chats_rename", "Rename a chat", tag="chats", body=chats.Rename,
                           data=responses.Chat),
            "delete": plain("chats_delete", "Delete a chat with its messages, state and watch",
                            tag="chats", data=responses.DeletedChat),
        },
        "/api/chats/{chat_id}/messages": {
            "parameters": [_CHAT_ID],
            "get": plain(
                "chats_list_messages", "A page of the chat's messages, oldest first",
                tag="chats", data=responses.MessagePage,
                parameters=(_LIMIT, number("after", "After this message `seq` (a page's "
                                                    "`next_after`)")),
            ),
            "post": stream(
                "chats_post_message",
                "Ask: start a turn and stream it (a plain {text}, or the body `useChat` posts); "
                "the turn goes on if the client goes away",
                tag="chats", body=_MESSAGE,
            ),
        },
        "/api/chats/{chat_id}/stream": {
            "parameters": [_CHAT_ID],
            "get": stream(
                "chats_resume", "Resume the turn in flight from Last-Event-ID", tag="chats",
                parameters=(_LAST_EVENT_ID,),
                otherwise={"204": {"description": "No turn is running"}},
            ),
        },
        "/api/chats/{chat_id}/events": {
            "parameters": [_CHAT_ID],
            "get": stream(
                "chats_events",
                "Every turn of the chat as it happens, scheduled ones included, from Last-Event-ID",
                tag="chats", parameters=(_LAST_EVENT_ID,),
            ),
        },
    }  # fmt: skip


def _watches() -> dict[str, dict[str, Any]]:
    return {
        "/api/automations/watches": {
            "get": plain("watches_list", "List the workspace's watches", tag="watches",
                         data=responses.WatchList),
            "post": plain("watches_create", "Watch a chat: re-ask its question on a cadence",
                          tag="watches", status="201", body=watches.NewWatch,
                          data=responses.Watch),
        },
        "/api/automations/{automation_id}": {
            "parameters": [_WATCH_ID],
            "patch": plain("watches_update", "Edit a watch in place: question, cadence, "
                           "timezone, condition, paused, notifications", tag="watches",
                           body=notify_schema.WatchChangeSchema, data=responses.Watch),
            "delete": plain("watches_stop", "Stop watching", tag="watches", data=None,
                            responses={**NO_CONTENT, "default": FAILURE}),
        },
        "/api/automations/{automation_id}/run": {
            "parameters": [_WATCH_ID],
            "post": plain("watches_run", "Run a watch now", tag="watches", status="202",
                          data=responses.RunQueued),
        },
        "/api/automations/{automation_id}/runs": {
            "parameters": [_WATCH_ID],
            "get": plain("watches_runs", "A watch's last 100 runs, what each found "
                         "(`changes`) and their notification deliveries", tag="watches",
                         data=responses.RunList),
        },
        "/api/automations/{automation_id}/runs/{run_id}": {
            "parameters": [_WATCH_ID, _RUN_ID],
            "get": plain("watches_run_get", "One run of a watch: its status, what it found "
                         "and its deliveries", tag="watches", data=responses.Run),
        },
    }  # fmt: skip


def paths() -> dict[str, dict[str, Any]]:
    return {
        **_v1(),
        **_auth(),
        **_workspace(),
        **_chats(),
        **_watches(),
        **openapi_board.paths(),
        **_merged(openapi_portability.paths()),
    }


def _merged(more: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`more`'s operations, joined to a path this module already lists."""
    mine = {**_workspace(), **_watches()}
    return {path: {**mine.get(path, {}), **ops} for path, ops in more.items()}
