"""Lookout as the OAuth 2.1 authorization server of its MCP resource, on Authlib.

Chosen over hand-written token logic and over the `mcp` package's own auth server (ASGI only,
Starlette): Authlib 1.9's generic `AuthorizationServer` runs without a web framework given
request/response adapters (below), and brings the RFC 6749 authorization-code and refresh
grants, RFC 7636 PKCE, RFC 7591 registration, RFC 7009 revocation and RFC 8414's metadata model;
what it lacks (RFC 8707 resource indicators, Client ID Metadata Documents) is a grant
extension in oauth_grants.py and oauth_clients.py. Seen here: the official `mcp` client's
OAuthClientProvider signs in against it end to end (tests/integration/test_oauth_flow.py), and
building the per-request Server costs about 150 us once its metadata is cached (545 us with the
metadata validated every time).

Authlib is synchronous: one OAuth request runs its whole flow in a worker thread, and the
storage hooks it calls run their queries on the event loop (`Context.run`), so a slow query
never blocks the loop. Only "S256" PKCE, one resource (the /mcp endpoint), codes good once,
refresh tokens rotated (a spent one presented again revokes its grant).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from authlib.oauth2.rfc6749 import (
    AuthorizationServer,
    JsonPayload,
    JsonRequest,
    OAuth2Payload,
    OAuth2Request,
)
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

from lookout.access import oauth_clients, oauth_grants
from lookout.access import oauth_models as models
from lookout.access.services import Services

T = TypeVar("T")
BRIDGE_TIMEOUT_S = 30.0
PATHS = {"authorize": "/authorize", "token": "/token", "register": "/register", "revoke": "/revoke"}


@functools.lru_cache(maxsize=8)
def metadata(issuer: str) -> dict[str, Any]:
    """RFC 8414 authorization server metadata (validated by Authlib's model, once per issuer:
    the validation is most of the cost of building a Server). Not to be changed by callers."""
    data: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": issuer + PATHS["authorize"],
        "token_endpoint": issuer + PATHS["token"],
        "registration_endpoint": issuer + PATHS["register"],
        "revocation_endpoint": issuer + PATHS["revoke"],
        "scopes_supported": list(models.SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(models.GRANT_TYPES),
        "token_endpoint_auth_methods_supported": list(models.AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(models.AUTH_METHODS),
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
        "service_documentation": issuer + "/v1/docs",
    }
    AuthorizationServerMetadata(data).validate()
    return data


@dataclasses.dataclass(frozen=True)
class HttpRequest:
    """What an OAuth endpoint reads of an HTTP request (the door builds it)."""

    method: str
    path_qs: str
    headers: Mapping[str, str]
    query: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    form: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    json: Any = None


@dataclasses.dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    headers: list[tuple[str, str]]


@dataclasses.dataclass(frozen=True)
class Context:
    """One OAuth request: the services, our issuer and resource URLs, the loop to query on."""

    services: Services
    issuer: str
    resource: str
    loop: asyncio.AbstractEventLoop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the event loop from Authlib's thread and wait for it; past the bound it
        is cancelled, so nothing it writes lands after this request was answered as failed."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(BRIDGE_TIMEOUT_S)
        except TimeoutError:
            future.cancel()
            raise


class _Payload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._data: dict[str, str] = {}
        self._datalist: collections.defaultdict[str, list[str]] = collections.defaultdict(list)
        for key, value in pairs:
            self._data.setdefault(key, value)
            self._datalist[key].append(value)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> collections.defaultdict[str, list[str]]:
        return self._datalist


class _Request(OAuth2Request):  # type: ignore[misc]
    def __init__(self, http: HttpRequest, issuer: str) -> None:
        super().__init__(http.method, issuer + http.path_qs, headers=dict(http.headers))
        self.payload = _Payload([*http.query, *http.form])
        self._args = dict(reversed(http.query))  # the first value of each
        self._form = dict(reversed(http.form))

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _JsonPayload(JsonPayload):  # type: ignore[misc]
    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def data(self) -> Any:
        return self._data


class Server(AuthorizationServer):  # type: ignore[misc]
    """One request's authorization server (cheap to build: a few registrations)."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(scopes_supported=list(models.SCOPES))
        self.ctx = ctx
        self.metadata = metadata(ctx.issuer)
        ttl = min(ctx.services.settings.oauth_access_ttl_s, models.MAX_ACCESS_TTL_S)
        generator = BearerTokenGenerator(
            models.new_access_token, models.new_refresh_token, expires_generator=ttl
        )
        self.register_token_generator("default", generator)
        extensions = [
            oauth_grants.S256Only(required=True),
            oauth_grants.ResourceIndicator(ctx.resource),
        ]
        self.register_grant(oauth_grants.CodeGrant, extensions)
        self.register_grant(oauth_grants.RefreshGrant)
        self.register_endpoint(oauth_grants.Revocation(self))
        self.register_endpoint(oauth_grants.registration_class()(self))

    def query_client(self, client_id: str) -> models.Client | None:
        if not isinstance(client_id, str):
            return None
        return self.ctx.run(oauth_clients.find(self.ctx.services, client_id, self.metadata))

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        self.ctx.run(oauth_grants.store_token(self.ctx.services, token, request))

    def validate_requested_scope(self, scope: str | None) -> None:
        return None  # unknown scopes are ignored, not refused (RFC 6749 §3.3)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return request if isinstance(request, OAuth2Request) else _Request(request, self.ctx.issuer)

    def create_json_request(self, request: HttpRequest) -> JsonRequest:
        wrapped = JsonRequest(request.method, self.ctx.issuer + request.path_qs, request.headers)
        wrapped.payload = _JsonPayload(request.json)
        return wrapped

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Answer:
        if isinstance(body, dict):
            body = {key: value for key, value in body.items() if value is not None}
        return Answer(status, body, list(headers))
