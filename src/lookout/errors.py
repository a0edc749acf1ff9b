"""The LookoutError tree: every failure a client can see has a stable code and HTTP status."""

from __future__ import annotations

from typing import Any


class LookoutError(Exception):
    """Something went wrong."""

    code = "internal"
    status = 500

    def __init__(self, message: str | None = None, **details: Any) -> None:
        self.message = message or (self.__doc__ or self.code).strip()
        self.details = details
        # Seconds a client should wait before retrying (busy, rate_limited): the Retry-After.
        self.retry_after: int | None = details.get("retry_after")
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidInput(LookoutError):
    """The request is not valid; see details for the fields to fix."""

    code = "invalid_input"
    status = 400


class Unauthenticated(LookoutError):
    """Sign in, or send a valid API key as 'Authorization: Bearer lk_...'."""

    code = "unauthenticated"
    status = 401


class InsufficientCredits(LookoutError):
    """This workspace does not have enough credits; ask its owner to add some."""

    code = "insufficient_credits"
    status = 402


class Forbidden(LookoutError):
    """Your role in this workspace does not allow this."""

    code = "forbidden"
    status = 403


class NotFound(LookoutError):
    """Not found."""

    code = "not_found"
    status = 404


class Conflict(LookoutError):
    """This conflicts with the current state; reload and try again."""

    code = "conflict"
    status = 409


class Busy(LookoutError):
    """This chat is answering another message; wait for it to finish."""

    code = "busy"
    status = 409


class PayloadTooLarge(LookoutError):
    """The request body is too large."""

    code = "payload_too_large"
    status = 413


class BlockedDestination(LookoutError):
    """That address is not allowed: Lookout only fetches public http(s) hosts."""

    code = "blocked_destination"
    status = 422


class FetchFailed(LookoutError):
    """The page could not be fetched."""

    code = "fetch_failed"
    status = 422


class RateLimited(LookoutError):
    """Too many requests; retry after the number of seconds in Retry-After."""

    code = "rate_limited"
    status = 429


class ProviderNotConfigured(LookoutError):
    """No provider is configured for this capability."""

    code = "provider_not_configured"
    status = 501


class UpstreamError(LookoutError):
    """An upstream provider failed; try again later."""

    code = "upstream_error"
    status = 502


class Unavailable(LookoutError):
    """A backing service is unavailable; try again in a few seconds."""

    code = "unavailable"
    status = 503


class ConfigError(Exception):
    """A setting is missing or malformed; raised at start-up, never reaches a client."""


def _subclasses(kind: type[LookoutError]) -> list[type[LookoutError]]:
    found = []
    for sub in kind.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def from_dict(data: dict[str, Any]) -> LookoutError:
    """Rebuild a stored error (a job's, a replayed response's) as the LookoutError it was."""
    by_code = {kind.code: kind for kind in _subclasses(LookoutError)}
    kind = by_code.get(str(data.get("code")), LookoutError)
    error = kind.__new__(kind)
    LookoutError.__init__(error, str(data.get("message") or ""), **dict(data.get("details") or {}))
    return error
