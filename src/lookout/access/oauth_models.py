"""What the OAuth authorization server knows, as the objects Authlib asks for: clients, codes,
refresh credentials, scopes, and the rules a redirect URI must follow. Pure: no I/O."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import ipaddress
import re
import secrets
import urllib.parse
import uuid
from typing import Any

from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin

from lookout.db import oauth as oauth_db

# What a connected agent may do in the workspace it was granted.
SCOPES = {
    "verbs:read": "Run Lookout's read-only verbs (read pages, find pages, places and reviews), "
    "paid with this workspace's credits",
    "jobs:read": "Look up the background jobs of this workspace's verb calls, and their results",
}
DEFAULT_SCOPE = " ".join(SCOPES)

ACCESS_PREFIX = "lko_"  # never "lk_": an OAuth token is never mistaken for an API key
REFRESH_PREFIX = "lkr_"
CODE_TTL_S = 120
REFRESH_TTL_S = 30 * 24 * 3600
MAX_ACCESS_TTL_S = 3600
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 2000
MAX_NAME_CHARS = 100
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]{0,40}$")
# Schemes a browser would run or read instead of handing to an app.
_NEVER = frozenset({"javascript", "data", "file", "vbscript", "about", "blob", "filesystem"})
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


def new_access_token(**_: Any) -> str:
    return ACCESS_PREFIX + secrets.token_urlsafe(32)


def new_refresh_token(**_: Any) -> str:
    return REFRESH_PREFIX + secrets.token_urlsafe(32)


def looks_like_access_token(text: str) -> bool:
    return text.startswith(ACCESS_PREFIX) and 20 <= len(text) <= 100


def scope_list(scope: str | None) -> list[str]:
    """The known scopes in `scope`, in our order (unknown ones are ignored, RFC 6749 §3.3)."""
    wanted = set((scope or "").split())
    return [name for name in SCOPES if name in wanted]


def allowed_scope(requested: str | None, registered: str | None) -> str:
    """What a client gets: what it asked for (everything when it asked for nothing we know),
    within what it registered."""
    ceiling = scope_list(registered) or list(SCOPES)
    asked = scope_list(requested) or list(SCOPES)
    return " ".join(name for name in asked if name in ceiling)


def redirect_uri_problem(uri: Any) -> str | None:
    """Why `uri` cannot be a redirect URI: https, http to a loopback address only (RFC 8252),
    or an app's own scheme; never a fragment, never a scheme a browser runs itself."""
    if not isinstance(uri, str) or not 0 < len(uri) <= MAX_URI_CHARS:
        return f"a redirect URI is a string of at most {MAX_URI_CHARS} characters"
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return f"{uri!r} is not a URI"
    scheme = parts.scheme.lower()
    if parts.fragment or "#" in uri:
        return f"{uri!r}: a redirect URI has no fragment"
    if not _SCHEME.match(scheme) or scheme in _NEVER:
        return f"{uri!r}: the scheme {scheme or '(none)'} cannot receive a code"
    if scheme in ("https", "http") and not parts.hostname:
        return f"{uri!r} has no host"
    if scheme == "http" and not _is_loopback(parts.hostname or ""):
        return f"{uri!r}: plain http is only for loopback addresses (127.0.0.1, localhost)"
    return None


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def same_redirect(registered: str, asked: str) -> bool:
    """Exact match, except that a loopback http redirect may use any port (RFC 8252 §7.3)."""
    if registered == asked:
        return True
    first, second = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(asked)
    loopback = first.scheme == second.scheme == "http" and _is_loopback(first.hostname or "")
    return (
        loopback
        and first.hostname == second.hostname
        and (first.path, first.query) == (second.path, second.query)
    )


@dataclasses.dataclass(frozen=True)
class Client(ClientMixin):  # type: ignore[misc]
    row: oauth_db.Client

    @property
    def name(self) -> str:
        return str(self.row.metadata.get("client_name") or self.row.client_id)

    @property
    def redirect_uris(self) -> list[str]:
        return list(self.row.metadata.get("redirect_uris") or [])

    def get_client_id(self) -> str:
        return self.row.client_id

    def get_default_redirect_uri(self) -> str | None:
        uris = self.redirect_uris
        return uris[0] if len(uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        return allowed_scope(scope, self.row.metadata.get("scope"))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return any(same_redirect(uri, redirect_uri) for uri in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        stored = self.row.secret_hash
        return stored is not None and hmac.compare_digest(stored, digest(client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return bool(method == self.row.metadata.get("token_endpoint_auth_method", "none"))

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in (self.row.metadata.get("grant_types") or ["authorization_code"])


@dataclasses.dataclass(frozen=True)
class Code(AuthorizationCodeMixin):  # type: ignore[misc]
    row: oauth_db.Code
    code_challenge_method: str = "S256"

    @property
    def code_challenge(self) -> str:
        return self.row.code_challenge

    def get_redirect_uri(self) -> str | None:
        return self.row.redirect_uri or None

    def get_scope(self) -> str:
        return self.row.scope


@dataclasses.dataclass(frozen=True)
class Refresh:
    """A refresh token this request spent (rotation): the pair it belonged to."""

    row: oauth_db.RefreshedToken

    def check_client(self, client: Client) -> bool:
        return bool(client.get_client_id() == self.row.client_id)

    def get_scope(self) -> str:
        return self.row.scope


@dataclasses.dataclass(frozen=True)
class Revocable:
    row: oauth_db.TokenRef
    is_refresh: bool

    def check_client(self, client: Client) -> bool:
        return bool(client.get_client_id() == self.row.client_id)


@dataclasses.dataclass(frozen=True)
class Grantor:
    """Who allowed the request, where, and what they allowed (Authlib's "user")."""

    user_id: uuid.UUID
    workspace_id: uuid.UUID
    scope: str | None = None
    grant_id: uuid.UUID | None = None
