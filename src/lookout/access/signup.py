"""Sign-up under LOOKOUT_SIGNUP, and the invites that open it when it is `invite`.

- `open`: anyone who reaches the page signs up and gets a workspace of their own with
  LOOKOUT_DEFAULT_CREDITS (which may be 0).
- `invite`: a workspace owner invites one email with a role; the invite's token (shown once,
  stored as SHA-256, valid LOOKOUT_INVITE_DAYS) lets that email sign up, once, into that
  workspace. An invite is honoured in `open` too; no own workspace, no starting credits.
- `closed`: nobody signs up; the operator creates users (`lookout admin create-user`).

Every sign-up is counted per client address (`throttle.signup_attempt`) by the route.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import secrets
import uuid

import asyncpg

from lookout import errors
from lookout.access import accounts, principals
from lookout.db import pool, repo
from lookout.settings import Settings

INVITE_PREFIX = "inv_"
MAX_OPEN_INVITES = 100
INVITE_ROLES = ("editor", "viewer")


@dataclasses.dataclass(frozen=True)
class NewInvite:
    """A freshly made invite: `token` is shown once and never stored."""

    invite: repo.Invite
    token: str
    url: str


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def invite_url(settings: Settings, token: str) -> str:
    """The web page's address that opens the sign-up form with the invite filled in."""
    return f"{settings.public_url.rstrip('/')}/#/invite/{token}"


def check_policy(settings: Settings, invite: str | None) -> None:
    """Forbidden unless LOOKOUT_SIGNUP lets this sign-up (with or without an invite) through."""
    if settings.signup == "closed":
        raise errors.Forbidden(
            "Sign-up is closed on this Lookout: ask its operator for an account."
        )
    if settings.signup == "invite" and invite is None:
        raise errors.Forbidden(
            "Sign-up on this Lookout is by invitation: ask a workspace owner for an invite link."
        )


async def create_account(
    db: asyncpg.Pool, settings: Settings, *, email: str, password: str, invite: str | None = None
) -> tuple[repo.User, repo.MemberWorkspace]:
    """A user and the workspace they land in: their own (open sign-up) or the one that invited
    them. All of it, or nothing."""
    check_policy(settings, invite)
    with pool.translate_errors():
        async with db.acquire() as conn, conn.transaction():
            user = await accounts.create_user(conn, email=email, password=password)
            if invite is None:
                workspace_id = await _own_workspace(conn, settings, user)
            else:
                workspace_id = await _join(conn, invite, user)
            workspaces = await repo.list_user_workspaces(conn, user_id=user.id)
    return user, next(ws for ws in workspaces if ws.id == workspace_id)


async def _own_workspace(
    conn: asyncpg.Connection, settings: Settings, user: repo.User
) -> uuid.UUID:
    workspace = await accounts.create_workspace(
        conn,
        name=f"{user.email.split('@')[0]}'s workspace",
        owner_id=user.id,
        credits=settings.default_credits,
    )
    return workspace.id


async def _join(conn: asyncpg.Connection, invite: str, user: repo.User) -> uuid.UUID:
    taken = await repo.accept_invite(
        conn, token_hash=token_digest(invite), email=user.email, user_id=user.id
    )
    if taken is None:
        # One answer for a wrong, used, expired or other-email token: none of them says more.
        raise errors.Forbidden(
            "This invite is not valid for this email (used, expired or revoked?): ask for a "
            "new one."
        )
    await repo.add_membership(
        conn, workspace_id=taken.workspace_id, user_id=user.id, role=taken.role
    )
    return taken.workspace_id


async def create_invite(
    db: asyncpg.Pool,
    settings: Settings,
    principal: principals.Principal,
    *,
    email: str,
    role: str,
) -> NewInvite:
    """An invite into the principal's workspace (owners only); Conflict when sign-up is closed
    or the workspace has too many open invites."""
    principal.require("owner")
    if settings.signup == "closed":
        raise errors.Conflict("Sign-up is closed on this Lookout (LOOKOUT_SIGNUP=closed).")
    email = accounts.check_email(email)
    if role not in INVITE_ROLES:
        raise errors.InvalidInput(fields={"role": [f"one of {', '.join(INVITE_ROLES)}"]})
    if await repo.count_open_invites(db, workspace_id=principal.workspace_id) >= MAX_OPEN_INVITES:
        raise errors.Conflict(
            f"This workspace has {MAX_OPEN_INVITES} open invites, the most it may have; "
            "revoke some first."
        )
    token = INVITE_PREFIX + secrets.token_urlsafe(24)
    invite = await repo.insert_invite(
        db,
        workspace_id=principal.workspace_id,
        email=email,
        role=role,
        token_hash=token_digest(token),
        created_by=principal.user_id,
        expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(days=settings.invite_days),
    )
    return NewInvite(invite=invite, token=token, url=invite_url(settings, token))


async def list_invites(db: asyncpg.Pool, principal: principals.Principal) -> list[repo.Invite]:
    principal.require("owner")
    return await repo.list_open_invites(db, workspace_id=principal.workspace_id)


async def revoke_invite(
    db: asyncpg.Pool, principal: principals.Principal, invite_id: uuid.UUID
) -> None:
    principal.require("owner")
    if not await repo.delete_invite(db, invite_id=invite_id, workspace_id=principal.workspace_id):
        raise errors.NotFound("No such invite in this workspace.")
