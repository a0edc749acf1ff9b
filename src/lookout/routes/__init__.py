"""Every route of the web process, listed in one function (layer 7, a door).

Request parsing, authentication from the request (authn), OpenAPI assembly; handlers call
services (layers 3-6), never lookout.db.repo's functions (its row types name what they return).
"""

from __future__ import annotations

from aiohttp import web

from lookout import capabilities
from lookout.routes import (
    auth,
    automations,
    board,
    chats,
    connectors,
    docs,
    health,
    invites,
    jobs,
    keys,
    mcp,
    metrics,
    notifications,
    oauth,
    owned,
    page,
    portability,
    verbs,
)


def setup_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", health.healthz)
    app.router.add_get("/readyz", health.readyz)
    metrics.setup(app)  # GET /metrics: behind a token, or on a private port
    # The web page: the app shell and its versioned static assets.
    site = page.Site.load()
    app.router.add_get("/", site.index)
    app.router.add_get("/app/{version}/{path:.+}", site.asset)
    app.router.add_post("/api/auth/signup", auth.signup)
    app.router.add_post("/api/auth/login", auth.login)
    app.router.add_post("/api/auth/logout", auth.logout)
    app.router.add_post("/api/auth/logout-everywhere", auth.logout_everywhere)
    app.router.add_get("/api/me", auth.me)
    app.router.add_get("/api/workspaces/{ws}/keys", keys.list_keys)
    app.router.add_post("/api/workspaces/{ws}/keys", keys.create_key)
    app.router.add_delete("/api/workspaces/{ws}/keys/{key_id}", keys.revoke_key)
    app.router.add_get("/api/workspaces/{ws}/invites", invites.list_invites)
    app.router.add_post("/api/workspaces/{ws}/invites", invites.create_invite)
    app.router.add_delete("/api/workspaces/{ws}/invites/{invite_id}", invites.revoke_invite)
    # The REST door: one POST per verb, generated from the registry.
    app.router.add_get("/v1/verbs", verbs.list_verbs)
    for verb in capabilities.registry.all_verbs():
        app.router.add_post(verbs.path_of(verb), verbs.verb_handler(verb))
    app.router.add_get("/v1/jobs/{job_id}", jobs.get_job)
    app.router.add_delete("/v1/jobs/{job_id}", jobs.cancel_job)
    app.router.add_get("/v1/jobs/{job_id}/artifacts/{artifact_id}", jobs.get_artifact)
    app.router.add_get("/v1/usage", jobs.usage)
    app.router.add_get("/v1/openapi.json", docs.openapi_json)
    app.router.add_get("/v1/docs", docs.docs_page)
    app.router.add_get("/v1/docs/init.js", docs.docs_init)
    app.router.add_get("/v1/docs/static/{name}", docs.docs_static)
    # The MCP door: one stateless endpoint (POST; other methods answer 405) and its metadata.
    app.router.add_route("*", "/mcp", mcp.endpoint)
    app.router.add_get("/.well-known/oauth-protected-resource", mcp.resource_metadata)
    app.router.add_get("/.well-known/oauth-protected-resource/mcp", mcp.resource_metadata)
    oauth.setup(app, site.index)  # its authorization server (OAuth 2.1), consent and agents
    # What a workspace keeps by name: one route table (routes/owned.py) per kind.
    owned.add(app, "/api/workspaces/{ws}/mcp-connectors", "connector_id", connectors.ROUTES)
    owned.add(app, "/api/workspaces/{ws}/notification-targets", "target_id", notifications.ROUTES)
    feeds = "/api/workspaces/{ws}/feeds"
    app.router.add_get(feeds, portability.list_feeds)
    app.router.add_post(feeds, portability.create_feed)
    app.router.add_delete(feeds + "/{feed_id}", portability.delete_feed)
    app.router.add_get("/feeds/{feed_token}", portability.read_feed)
    app.router.add_get("/api/workspaces/{ws}/watches/export", portability.export_watches)
    app.router.add_post("/api/workspaces/{ws}/watches/import", portability.import_watches)
    # Chats: REST + the turn's SSE stream, resume, and the live tail of every turn.
    app.router.add_post("/api/chats", chats.create_chat)
    app.router.add_get("/api/chats", chats.list_chats)
    app.router.add_get("/api/chats/{chat_id}", chats.get_chat)
    app.router.add_patch("/api/chats/{chat_id}", chats.rename_chat)
    app.router.add_delete("/api/chats/{chat_id}", chats.delete_chat)
    app.router.add_get("/api/chats/{chat_id}/messages", chats.list_messages)
    app.router.add_post("/api/chats/{chat_id}/messages", chats.post_message)
    app.router.add_get("/api/chats/{chat_id}/stream", chats.resume)
    app.router.add_get("/api/chats/{chat_id}/events", chats.tail)
    # Watches: automations bound to chats.
    app.router.add_get("/api/automations/watches", automations.list_watches)
    app.router.add_post("/api/automations/watches", automations.create_watch)
    app.router.add_post("/api/automations/{automation_id}/run", automations.run_watch)
    app.router.add_delete("/api/automations/{automation_id}", automations.stop_watch)
    app.router.add_patch("/api/automations/{automation_id}", automations.update_watch)
    app.router.add_get("/api/automations/{automation_id}/runs", automations.list_runs)
    app.router.add_get("/api/automations/{automation_id}/runs/{run_id}", automations.get_run)
    board.setup(app)  # the watches page, a watch's history of checks, watch settings
