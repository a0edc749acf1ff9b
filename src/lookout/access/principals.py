"""Who is asking: a signed-in user, an API key, an agent a person connected over OAuth, or the
system acting as a watch's creator."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Literal

from lookout import errors

Kind = Literal["session", "api_key", "oauth", "system"]
ROLES = ("viewer", "editor", "owner")


@dataclasses.dataclass(frozen=True)
class Principal:
    kind: Kind
    workspace_id: uuid.UUID
    role: str
    user_id: uuid.UUID | None = None
    key_id: uuid.UUID | None = None
    rate_limit_per_minute: int | None = None
    # An API key's scope (keys.SCOPES); None for sessions and the system.
    scope: str | None = None
    # An OAuth principal acts for `user_id` through this grant (a connected agent).
    grant_id: uuid.UUID | None = None

    @property
    def actor(self) -> str:
        """A short label for the ledger and logs (never a secret)."""
        ident = {"api_key": self.key_id, "oauth": self.grant_id}.get(self.kind, self.user_id)
        return f"{self.kind}:{ident}"

    def require(self, role: str) -> None:
        """Forbidden unless this principal's role is at least `role`."""
        if ROLES.index(self.role) >= ROLES.index(role):
            return
        if self.kind == "api_key":
            raise key_forbidden(self.scope, role)
        raise errors.Forbidden(
            f"This needs the {role} role in this workspace; you are a {self.role}."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "workspace_id": str(self.workspace_id),
            "role": self.role,
            "user_id": str(self.user_id) if self.user_id else None,
            "key_id": str(self.key_id) if self.key_id else None,
            "rate_limit_per_minute": self.rate_limit_per_minute,
            "scope": self.scope,
            "grant_id": str(self.grant_id) if self.grant_id else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Principal:
        return cls(
            kind=data["kind"],
            workspace_id=uuid.UUID(data["workspace_id"]),
            role=data["role"],
            user_id=uuid.UUID(data["user_id"]) if data.get("user_id") else None,
            key_id=uuid.UUID(data["key_id"]) if data.get("key_id") else None,
            rate_limit_per_minute=data.get("rate_limit_per_minute"),
            scope=data.get("scope"),
            grant_id=uuid.UUID(data["grant_id"]) if data.get("grant_id") else None,
        )


def key_forbidden(scope: str | None, role: str) -> errors.Forbidden:
    """What an API key is told when it tries something its rights do not cover."""
    if scope == "read-only":
        return errors.Forbidden(
            "This API key is read-only: it can read, but not spend credits, start or change "
            "watches, or change anything else; use a full key.",
            scope=scope,
        )
    return errors.Forbidden(
        f"This needs the {role} role; an API key has its creator's role in this workspace as "
        "it is now (an editor's at most), and that does not allow this.",
        scope=scope,
    )
