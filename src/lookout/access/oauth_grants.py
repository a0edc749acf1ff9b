"""The grants and endpoints of Lookout's authorization server (Authlib's, with our storage):
authorization code with S256 PKCE and RFC 8707 resource checks, rotating refresh tokens,
RFC 7009 revocation and RFC 7591 registration. Their hooks are synchronous (Authlib calls them
in the request's worker thread) and run their queries on the loop (`server.ctx.run`).

The registration endpoint's class is made with the first Server (`registration_class`):
`authlib.oauth2.rfc7591` imports joserfc's key sets, which load cryptography's Rust extension,
and a web process that serves no OAuth request never holds them (see oauth_clients)."""

from __future__ import annotations

import datetime as dt
import functools
import logging
import secrets
from typing import TYPE_CHECKING, Any

from authlib.oauth2.rfc6749 import (
    InvalidRequestError,
    JsonRequest,
    OAuth2Error,
    OAuth2Request,
    grants,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge

from lookout.access import oauth_clients
from lookout.access import oauth_models as models
from lookout.access.services import Services
from lookout.db import oauth as oauth_db
from lookout.db import repo

if TYPE_CHECKING:  # the server registers these grants
    from lookout.access.oauth_server import Server

logger = logging.getLogger(__name__)


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """RFC 8707: the resource asked for is not one this server issues tokens for."""

    error = "invalid_target"


def check_resource(request: OAuth2Request, resource: str) -> None:
    """RFC 8707: at most one `resource`, and when given it is our MCP endpoint."""
    asked = request.payload.datalist.get("resource", [])
    if len(asked) > 1:
        raise InvalidTargetError(f"Ask for one resource; this server's is {resource}.")
    if asked and asked[0].rstrip("/") != resource:
        raise InvalidTargetError(
            f"Tokens of this server are for {resource}, not for {asked[0][:200]}."
        )


class S256Only(CodeChallenge):  # type: ignore[misc]
    """PKCE is required, with S256: a request without it or with "plain" is refused."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge (S256).")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("Only code_challenge_method=S256 is accepted, not plain.")
        super().validate_code_challenge(grant, redirect_uri)


class ResourceIndicator:
    """A grant extension: the resource is checked at the authorization and token endpoints."""

    def __init__(self, resource: str) -> None:
        self.resource = resource

    def __call__(self, grant: Any) -> None:
        grant.register_hook("after_validate_authorization_request_payload", self.authorizing)
        grant.register_hook("after_validate_token_request", self.exchanging)

    def authorizing(self, grant: Any, redirect_uri: str) -> None:
        check_resource(grant.request, self.resource)

    def exchanging(self, grant: Any, result: Any) -> None:
        check_resource(grant.request, grant.request.authorization_code.row.resource)


class CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = list(models.AUTH_METHODS)
    server: Server

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        grantor: models.Grantor = request.user
        allowed = models.scope_list(grantor.scope)
        scope = " ".join(s for s in models.scope_list(request.scope) if s in allowed)
        ctx = self.server.ctx
        ctx.run(
            oauth_db.insert_code(
                ctx.services.db,
                code_hash=models.digest(code),
                client_id=request.client.get_client_id(),
                user_id=grantor.user_id,
                workspace_id=grantor.workspace_id,
                redirect_uri=request.payload.redirect_uri or "",
                scope=scope,
                resource=ctx.resource,
                code_challenge=request.payload.data["code_challenge"],
                expires_at=_now() + dt.timedelta(seconds=models.CODE_TTL_S),
            )
        )

    def query_authorization_code(self, code: str, client: models.Client) -> models.Code | None:
        if not isinstance(code, str) or len(code) > 200:
            return None
        return self.server.ctx.run(_redeem(self.server.ctx.services, code, client))

    def delete_authorization_code(self, authorization_code: models.Code) -> None:
        return None  # spent when redeemed (consume_oauth_code)

    def authenticate_user(self, authorization_code: models.Code) -> models.Grantor | None:
        row = authorization_code.row
        return self.server.ctx.run(_member(self.server.ctx.services, row.user_id, row.workspace_id))


class RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = list(models.AUTH_METHODS)
    INCLUDE_NEW_REFRESH_TOKEN = True
    server: Server

    def validate_token_request(self) -> None:
        super().validate_token_request()
        check_resource(self.request, self.request.refresh_token.row.resource)

    def authenticate_refresh_token(self, refresh_token: str) -> models.Refresh | None:
        if not refresh_token.startswith(models.REFRESH_PREFIX) or len(refresh_token) > 100:
            return None
        return self.server.ctx.run(_spend_refresh(self.server.ctx.services, refresh_token))

    def authenticate_user(self, refresh_token: models.Refresh) -> models.Grantor:
        row = refresh_token.row
        return models.Grantor(row.user_id, row.workspace_id, row.scope, row.grant_id)

    def revoke_old_credential(self, refresh_token: models.Refresh) -> None:
        return None  # spent when presented (consume_oauth_refresh_token)


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = list(models.AUTH_METHODS)
    server: Server

    def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
        if not isinstance(token_string, str) or len(token_string) > 200:
            return None
        ctx = self.server.ctx
        found = ctx.run(
            oauth_db.find_token_for_revocation(
                ctx.services.db, token_hash=models.digest(token_string)
            )
        )
        if found is None:
            return None
        return models.Revocable(found, token_string.startswith(models.REFRESH_PREFIX))

    def revoke_token(self, token: models.Revocable, request: OAuth2Request) -> None:
        """An access token ends its pair; a refresh token ends the whole grant (disconnects)."""
        db = self.server.ctx.services.db
        if token.is_refresh:
            self.server.ctx.run(oauth_db.revoke_grant(db, grant_id=token.row.grant_id))
        else:
            self.server.ctx.run(oauth_db.revoke_token(db, token_id=token.row.id))


@functools.cache
def registration_class() -> type[Any]:
    """Authlib's RFC 7591 endpoint with our hooks (`Registration`), made on first use."""
    from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint

    return type("Registration", (Registration, ClientRegistrationEndpoint), {})


class Registration:
    """Open registration (RFC 7591), rate limited by the door; clients unused are swept. The
    hooks of Authlib's ClientRegistrationEndpoint, put before it by `registration_class`."""

    server: Server

    def authenticate_token(self, request: JsonRequest) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return self.server.metadata

    def extract_client_metadata(self, request: JsonRequest) -> dict[str, Any]:
        if not request.payload.data:
            raise InvalidRequestError("Send the client metadata as a JSON object.")
        checked = oauth_clients.check(request.payload.data, self.get_server_metadata())
        request.public_client = checked["token_endpoint_auth_method"] == "none"
        return checked

    def generate_client_id(self, request: JsonRequest) -> str:
        return secrets.token_urlsafe(24)

    def generate_client_secret(self, request: JsonRequest) -> str | None:
        return None if request.public_client else secrets.token_urlsafe(32)

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: JsonRequest
    ) -> oauth_db.Client:
        secret = client_info.get("client_secret")
        return self.server.ctx.run(
            oauth_db.insert_client(
                self.server.ctx.services.db,
                client_id=client_info["client_id"],
                secret_hash=models.digest(secret) if secret else None,
                metadata=client_metadata,
            )
        )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


async def _redeem(services: Services, code: str, client: models.Client) -> models.Code | None:
    """The code, spent now; a code presented twice revokes what its first use granted."""
    code_hash = models.digest(code)
    row = await oauth_db.consume_code(
        services.db, code_hash=code_hash, client_id=client.get_client_id()
    )
    if row is not None:
        return models.Code(row)
    grant_id = await oauth_db.get_used_code_grant(services.db, code_hash=code_hash)
    if grant_id is not None:
        logger.warning("OAuth code reused: grant %s revoked", grant_id)
        await oauth_db.revoke_grant(services.db, grant_id=grant_id)
    return None


async def _spend_refresh(services: Services, token: str) -> models.Refresh | None:
    """The refresh token's pair, spent now; a spent token presented again revokes its grant."""
    token_hash = models.digest(token)
    row = await oauth_db.consume_refresh_token(services.db, refresh_hash=token_hash)
    if row is not None:
        return models.Refresh(row)
    grant_id = await oauth_db.get_spent_refresh_grant(services.db, refresh_hash=token_hash)
    if grant_id is not None:
        logger.warning("OAuth refresh token reused: grant %s revoked", grant_id)
        await oauth_db.revoke_grant(services.db, grant_id=grant_id)
    return None


async def _member(services: Services, user_id: Any, workspace_id: Any) -> models.Grantor | None:
    role = await repo.get_role(services.db, workspace_id=workspace_id, user_id=user_id)
    return models.Grantor(user_id, workspace_id) if role is not None else None


async def store_token(services: Services, token: dict[str, Any], request: OAuth2Request) -> None:
    now = _now()
    refresh = token.get("refresh_token")
    values = {
        "access_hash": models.digest(token["access_token"]),
        "refresh_hash": models.digest(refresh) if refresh else None,
        "scope": token.get("scope", ""),
        "access_expires_at": now + dt.timedelta(seconds=int(token["expires_in"])),
        "refresh_expires_at": now + dt.timedelta(seconds=models.REFRESH_TTL_S) if refresh else None,
    }
    client_id = request.client.get_client_id()
    if request.refresh_token is not None:
        grant_id = request.refresh_token.row.grant_id
        await oauth_db.insert_token(services.db, grant_id=grant_id, **values)
    else:
        code: models.Code = request.authorization_code
        async with repo.transaction(services.db) as conn:
            grant_id = await oauth_db.upsert_grant(
                conn,
                client_id=client_id,
                workspace_id=code.row.workspace_id,
                user_id=code.row.user_id,
                scope=code.row.scope,
                resource=code.row.resource,
            )
            await oauth_db.insert_token(conn, grant_id=grant_id, **values)
            await oauth_db.set_code_grant(conn, code_hash=code.row.code_hash, grant_id=grant_id)
    await oauth_db.touch_client(services.db, client_id=client_id)
