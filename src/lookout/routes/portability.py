"""Feeds (Atom, behind a secret URL) and the export / import of a workspace's watches."""

from __future__ import annotations

import uuid

from aiohttp import web

from lookout import appkeys, errors
from lookout.routes import authn, common
from lookout.schema import connectors as common_schema
from lookout.schema import portability as schema
from lookout.watches import atom, feeds, imports, portability


async def list_feeds(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    found = await feeds.list_all(request.app[appkeys.DB], principal)
    views = [feeds.view(feed) for feed in found]
    return common.ok(request, {"feeds": schema.FeedSchema(many=True).dump(views)})


async def create_feed(request: web.Request) -> web.Response:
    """Make (or rotate) a feed's secret URL; the URL is in this answer only."""
    principal = await authn.authenticate(request)
    body = common_schema.load(schema.NewFeedSchema(), await common.json_body(request))
    made, token = await feeds.create(request.app[appkeys.DB], principal, body["watch_id"])
    url = feeds.url_of(request.app[appkeys.SETTINGS], token)
    data = {"feed": schema.FeedSchema().dump(feeds.view(made)), "url": url}
    return common.ok(request, data, status=201)


async def delete_feed(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    try:
        feed_id = uuid.UUID(request.match_info["feed_id"])
    except ValueError:
        raise errors.NotFound("No such feed in this workspace.") from None
    await feeds.revoke(request.app[appkeys.DB], principal, feed_id)
    return common.ok(request, {"deleted": True})


async def read_feed(request: web.Request) -> web.Response:
    """The Atom feed: the token in the URL is the only credential (feed readers send no other)."""
    document = await feeds.render(
        request.app[appkeys.DB], request.app[appkeys.SETTINGS], request.match_info["feed_token"]
    )
    return web.Response(
        body=document, content_type=atom.CONTENT_TYPE, charset="utf-8",
        headers={"Cache-Control": "private, max-age=60", "X-Robots-Tag": "noindex",
                 "Referrer-Policy": "no-referrer"},
    )  # fmt: skip


async def export_watches(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    document = await portability.export(request.app[appkeys.DB], principal)
    return common.ok(request, schema.ExportSchema().dump(document))


async def import_watches(request: web.Request) -> web.Response:
    """Create the watches of a Lookout export or of a changedetection.io url-watches.json."""
    principal = await authn.authenticate(request)
    principal.require("editor")
    body = common_schema.load(schema.ImportSchema(), await common.json_body(request))
    settings = request.app[appkeys.SETTINGS]
    planned = portability.plan(body["source"], body["file"], settings)
    created = await portability.run_import(request.app[appkeys.DB], settings, principal, planned)
    ignored = imports.ignored_keys(body["file"]) if body["source"] != "lookout" else []
    data = {"created": schema.ImportedWatch(many=True).dump(created), "ignored_keys": ignored}
    return common.ok(request, data, status=201)
