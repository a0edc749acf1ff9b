"""OAuth access tokens at the MCP door: a token becomes the principal of the connected agent
(its grant, acting for the person who allowed it) and the scopes it was granted."""

from __future__ import annotations

import dataclasses

import asyncpg

from lookout import errors
from lookout.access import keys
from lookout.access import oauth_models as models
from lookout.access.principals import Principal
from lookout.db import oauth as oauth_db

INVALID = "This access token is not valid, has expired or was revoked; connect the agent again."


@dataclasses.dataclass(frozen=True)
class Bearer:
    principal: Principal
    scopes: frozenset[str]


def is_access_token(token: str) -> bool:
    return models.looks_like_access_token(token)


async def bearer(db: asyncpg.Pool, usage: keys.KeyUsage, token: str, resource: str) -> Bearer:
    """The agent behind `token`, if the token is live, was issued for `resource` (RFC 8707
    audience) and its person still belongs to the workspace; else Unauthenticated.

    Looked up on every request (one indexed read, no cache), so a revoked grant or a person
    who left the workspace is refused at once."""
    if not is_access_token(token):
        raise errors.Unauthenticated(INVALID)
    found = await oauth_db.find_access_token(db, access_hash=models.digest(token))
    if found is None or found.resource != resource:
        raise errors.Unauthenticated(INVALID)
    if usage.due(found.grant_id):
        await oauth_db.touch_grant(db, grant_id=found.grant_id)
    principal = Principal(
        kind="oauth",
        workspace_id=found.workspace_id,
        role=found.role,
        user_id=found.user_id,
        grant_id=found.grant_id,
    )
    return Bearer(principal, frozenset(models.scope_list(found.scope)))
