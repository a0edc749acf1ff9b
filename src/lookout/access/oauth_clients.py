"""OAuth clients: validated RFC 7591 metadata, and Client ID Metadata Documents (the client_id
is an https URL whose JSON document describes the client), read through the SSRF-safe fetcher.

Authlib's RFC 7591 claims load with the first metadata checked (`_claims_class`), not with this
module: `authlib.oauth2.rfc7591` imports joserfc's key sets, which load cryptography's Rust
extension (with access.secrets' lazy import: `lookout web`'s app built from a production
install, 83.6 -> 74.5 MiB RSS, 2026-12-04). Its one error, `invalid_client_metadata`, is
declared here for the same reason."""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
import urllib.parse
from typing import TYPE_CHECKING, Any

from authlib.oauth2.rfc6749 import OAuth2Error
from joserfc.errors import InvalidClaimError, JoseError

from lookout import errors
from lookout.access import oauth_models as models
from lookout.access.services import Services
from lookout.capabilities import fetch
from lookout.db import oauth as oauth_db
from lookout.settings import Settings

if TYPE_CHECKING:
    from authlib.oauth2.rfc7591 import ClientMetadataClaims as _ClaimsBase
else:
    _ClaimsBase = object

logger = logging.getLogger(__name__)

# What we keep of a client's metadata; anything else it sends is ignored (RFC 7591 §2).
KEPT = (
    "redirect_uris",
    "token_endpoint_auth_method",
    "grant_types",
    "response_types",
    "client_name",
    "client_uri",
    "logo_uri",
    "scope",
    "software_id",
    "software_version",
)
DOCUMENT_MAX_BYTES = 16 * 1024
DOCUMENT_TTL = dt.timedelta(hours=1)


class InvalidClientMetadataError(OAuth2Error):  # type: ignore[misc]
    """RFC 7591 §3.2.2: a client metadata field is invalid (authlib.oauth2.rfc7591's, as it
    declares it: an OAuth2Error with this error code)."""

    error = "invalid_client_metadata"


@functools.cache
def _claims_class() -> type[Any]:
    """Authlib's RFC 7591 claims with our checks (`Claims`), made on first use."""
    from authlib.oauth2.rfc7591 import ClientMetadataClaims

    return type("Claims", (Claims, ClientMetadataClaims), {})


class Claims(_ClaimsBase):  # type: ignore[misc]
    """Authlib's RFC 7591 checks, plus ours: bounded sizes, safe redirect URIs, our scopes. Put
    before Authlib's ClientMetadataClaims by `_claims_class`."""

    REGISTERED_CLAIMS = list(KEPT)

    def validate_redirect_uris(self) -> None:
        uris = self.get("redirect_uris")
        if not isinstance(uris, list) or not 0 < len(uris) <= models.MAX_REDIRECT_URIS:
            raise InvalidClaimError("redirect_uris")
        for uri in uris:
            if (problem := models.redirect_uri_problem(uri)) is not None:
                raise InvalidClientMetadataError(f"redirect_uris: {problem}")

    def validate_client_name(self) -> None:
        name = self.get("client_name")
        if name is not None and (not isinstance(name, str) or len(name) > models.MAX_NAME_CHARS):
            raise InvalidClaimError("client_name")

    def validate_software_id(self) -> None:
        for key in ("software_id", "software_version"):
            value = self.get(key)
            if value is not None and (not isinstance(value, str) or len(value) > 200):
                raise InvalidClaimError(key)

    def _validate_uri(self, key: str, uri: Any = None) -> None:
        value = self.get(key) if uri is None else uri
        if value is None:
            return
        if not isinstance(value, str) or len(value) > models.MAX_URI_CHARS:
            raise InvalidClaimError(key)
        if not value.startswith("https://"):
            raise InvalidClientMetadataError(f"{key} must be an https URL")
        super()._validate_uri(key, value)


def prepare(data: Any) -> dict[str, Any]:
    """The claims Authlib validates: ours only, with scope cut to the scopes we know."""
    if not isinstance(data, dict):
        raise InvalidClientMetadataError("The client metadata must be a JSON object.")
    kept = {key: data[key] for key in KEPT if key in data}
    if "scope" in kept:
        kept["scope"] = " ".join(models.scope_list(str(kept["scope"]))) or models.DEFAULT_SCOPE
    return kept


def check(data: Any, server_metadata: dict[str, Any]) -> dict[str, Any]:
    """Validated metadata, or InvalidClientMetadataError saying what is wrong."""
    kept = prepare(data)
    made = _claims_class()
    claims = made(kept, {}, made.get_claims_options(server_metadata), server_metadata)
    try:
        claims.validate()
    except JoseError as exc:
        raise InvalidClientMetadataError(exc.description) from exc
    metadata: dict[str, Any] = claims.get_registered_claims()
    metadata.setdefault("grant_types", ["authorization_code"])
    metadata.setdefault("response_types", ["code"])
    return metadata


def is_metadata_url(client_id: str, settings: Settings) -> bool:
    """A client_id that names a Client ID Metadata Document: https with a path (plain http only
    where private networks are allowed, that is in tests and closed deployments)."""
    if len(client_id) > models.MAX_URI_CHARS:
        return False
    try:
        parts = urllib.parse.urlsplit(client_id)
    except ValueError:
        return False
    schemes = ("https", "http") if settings.allow_private_networks else ("https",)
    return (
        parts.scheme in schemes
        and bool(parts.hostname)
        and parts.path not in ("", "/")
        and not parts.fragment
        and parts.username is None
    )


async def find(
    services: Services, client_id: str, server_metadata: dict[str, Any]
) -> models.Client | None:
    """The client with this id: registered, or described by the document at its URL."""
    if not client_id or len(client_id) > models.MAX_URI_CHARS:
        return None
    row = await oauth_db.get_client(services.db, client_id=client_id)
    if row is not None and row.kind == "registered":
        return models.Client(row)
    if not is_metadata_url(client_id, services.settings):
        return None
    if row is not None and dt.datetime.now(dt.UTC) - row.fetched_at < DOCUMENT_TTL:
        return models.Client(row)
    metadata = await read_document(services, client_id, server_metadata)
    if metadata is None:
        return None
    saved = await oauth_db.upsert_metadata_client(
        services.db, client_id=client_id, metadata=metadata
    )
    return models.Client(saved) if saved is not None else None


async def read_document(
    services: Services, url: str, server_metadata: dict[str, Any]
) -> dict[str, Any] | None:
    """The validated metadata of the document at `url`, or None (logged) when it is unusable."""
    try:
        result = await fetch.fetch(
            url,
            settings=services.settings,
            session=services.http,
            max_bytes=DOCUMENT_MAX_BYTES,
            accept=("application/json",),
        )
        document = json.loads(result.body) if result.status == 200 else None
        if not isinstance(document, dict) or document.get("client_id") != url:
            raise InvalidClientMetadataError("the document's client_id is not its own URL")
        if document.get("token_endpoint_auth_method", "none") != "none":
            raise InvalidClientMetadataError("a metadata document client has no secret")
        document = {**document, "token_endpoint_auth_method": "none"}
        return check(document, server_metadata)
    except (errors.LookoutError, ValueError, RecursionError, InvalidClientMetadataError) as exc:
        logger.info("client metadata document %s refused: %s", url, exc)
        return None
