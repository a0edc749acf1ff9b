"""The OAuth endpoints as async calls for the door: each runs Authlib in a worker thread
(see oauth_server) and answers a plain Answer, or, for the consent step, what to show."""

from __future__ import annotations

import asyncio
import dataclasses
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, cast

import asyncpg
from authlib.oauth2.rfc6749 import OAuth2Error

from lookout import errors
from lookout.access import oauth_models as models
from lookout.access import oauth_server
from lookout.access.oauth_server import Answer, Context, HttpRequest
from lookout.access.principals import Principal
from lookout.db import oauth as oauth_db
from lookout.db import repo

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Pending:
    """An authorization request that passed every check: what the consent page shows."""

    client_id: str
    client_name: str
    client_uri: str | None
    client_kind: str
    redirect_uri: str
    redirect_host: str
    scopes: list[str]
    resource: str


class Problem(Exception):
    """The authorization request is refused; `redirect_to` tells the client, when it may."""

    def __init__(self, error: str, description: str, redirect_to: str | None) -> None:
        super().__init__(description)
        self.error, self.description, self.redirect_to = error, description, redirect_to


async def token(ctx: Context, http: HttpRequest) -> Answer:
    return await _in_thread(ctx, lambda server: server.create_token_response(http))


async def revoke(ctx: Context, http: HttpRequest) -> Answer:
    return await _in_thread(ctx, lambda s: s.create_endpoint_response("revocation", http))


async def register(ctx: Context, http: HttpRequest) -> Answer:
    return await _in_thread(ctx, lambda s: s.create_endpoint_response("client_registration", http))


async def pending(ctx: Context, http: HttpRequest) -> Pending:
    """What the request asks for, or Problem."""
    return await _in_thread(ctx, lambda server: _pending(server, http))


async def decide(ctx: Context, http: HttpRequest, grantor: models.Grantor | None) -> str:
    """Where to send the browser: the client's redirect URI with a code (allowed) or with
    access_denied (`grantor` None); Problem when the request is no longer valid."""
    answer = await _in_thread(ctx, lambda server: _decide(server, http, grantor))
    location = dict(answer.headers).get("Location")
    if location is None:
        body = answer.body if isinstance(answer.body, dict) else {}
        raise Problem(body.get("error", "invalid_request"), body.get("error_description", ""), None)
    return str(location)


async def check_decision(
    db: Any, user_id: uuid.UUID, workspace_id: uuid.UUID, scopes: list[str], asked: list[str]
) -> models.Grantor:
    """The person's choice, if they may make it: a workspace of theirs, scopes among those
    asked, and `verbs:read` (spending credits) only as an editor or owner."""
    role = await repo.get_role(db, workspace_id=workspace_id, user_id=user_id)
    if role is None:
        raise errors.NotFound("No such workspace.")
    chosen = [scope for scope in asked if scope in scopes]
    if not chosen:
        raise errors.InvalidInput("Allow at least one of the permissions asked for.")
    if "verbs:read" in chosen and role == "viewer":
        raise errors.Forbidden(
            "Running verbs spends this workspace's credits, which needs the editor role; "
            "you are a viewer here. Pick another workspace or only allow jobs:read."
        )
    return models.Grantor(user_id, workspace_id, " ".join(chosen))


async def _in_thread(ctx: Context, call: Callable[[oauth_server.Server], T]) -> T:
    server = oauth_server.Server(ctx)

    def run() -> T:
        try:
            return call(server)
        except OAuth2Error as exc:  # raised before Authlib's own handling (e.g. transport)
            answer: Any = server.handle_response(*exc(None))
            return cast(T, answer)

    return await asyncio.to_thread(run)


def _problem(exc: OAuth2Error) -> Problem:
    _status, _body, headers = exc(None)
    return Problem(exc.error, exc.description or exc.error, dict(headers).get("Location"))


def _pending(server: oauth_server.Server, http: HttpRequest) -> Pending:
    try:
        grant = server.get_consent_grant(http)
    except OAuth2Error as exc:
        raise _problem(exc) from None
    client: models.Client = grant.request.client
    redirect = grant.redirect_uri
    return Pending(
        client_id=client.get_client_id(),
        client_name=client.name,
        client_uri=client.row.metadata.get("client_uri"),
        client_kind=client.row.kind,
        redirect_uri=redirect,
        redirect_host=urllib.parse.urlsplit(redirect).netloc or redirect.split(":", 1)[0],
        scopes=models.scope_list(grant.request.scope),
        resource=server.ctx.resource,
    )


def _decide(
    server: oauth_server.Server, http: HttpRequest, grantor: models.Grantor | None
) -> Answer:
    try:
        grant = server.get_consent_grant(http)
    except OAuth2Error as exc:
        raise _problem(exc) from None
    answer: Answer = server.create_authorization_response(
        grant.request, grant_user=grantor, grant=grant
    )
    return answer


async def list_grants(db: asyncpg.Pool, principal: Principal) -> list[oauth_db.Grant]:
    """The workspace's connected agents."""
    return await oauth_db.list_grants(db, workspace_id=principal.workspace_id)


async def revoke_grant(
    db: asyncpg.Pool, principal: Principal, grant_id: uuid.UUID
) -> oauth_db.Grant:
    """Revoke a connected agent at once; revoking it again is not an error (DELETE)."""
    await oauth_db.revoke_grant(db, grant_id=grant_id, workspace_id=principal.workspace_id)
    found = await oauth_db.get_grant(db, grant_id=grant_id, workspace_id=principal.workspace_id)
    if found is None:
        raise errors.NotFound("No such connected agent.")
    return found
