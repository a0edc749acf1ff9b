"""Accounts: users, workspaces, credits grants and API keys (services over db.repo)."""

from __future__ import annotations

import dataclasses
import re
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access import keys, passwords, principals
from lookout.db import repo

_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")


@dataclasses.dataclass(frozen=True)
class NewKey:
    """A freshly created key: `text` is shown once and never stored."""

    key: repo.ApiKey
    text: str


def check_email(email: str) -> str:
    email = email.strip()
    if len(email) > 254 or not _EMAIL.match(email):
        raise errors.InvalidInput("That is not an email address.", fields={"email": ["invalid"]})
    return email


def check_password(password: str) -> None:
    if not passwords.MIN_LENGTH <= len(password) <= passwords.MAX_LENGTH:
        raise errors.InvalidInput(
            f"Passwords need at least {passwords.MIN_LENGTH} characters.",
            fields={"password": [f"at least {passwords.MIN_LENGTH} characters"]},
        )


async def create_user(db: repo.Executor, *, email: str, password: str) -> repo.User:
    email = check_email(email)
    check_password(password)
    password_hash = await passwords.hash_password(password)
    try:
        return await repo.insert_user(db, email=email, password_hash=password_hash)
    except errors.Conflict:
        raise errors.Conflict("An account with this email already exists.") from None


async def create_workspace(
    db: repo.Executor, *, name: str, owner_id: uuid.UUID, credits: int = 0
) -> repo.Workspace:
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise errors.InvalidInput("A workspace name has 1 to 200 characters.")
    workspace = await repo.insert_workspace(db, name=name, owner_id=owner_id)
    if credits:
        await grant(db, workspace_id=workspace.id, amount=credits, request_id="initial")
    return workspace


async def grant(
    db: repo.Executor, *, workspace_id: uuid.UUID, amount: int, request_id: str | None = None
) -> int:
    """Add credits; returns the new balance (a repeated request id adds nothing)."""
    if amount <= 0:
        raise errors.InvalidInput("Grant a positive number of credits.")
    if await repo.get_workspace(db, workspace_id=workspace_id) is None:
        raise errors.NotFound("No such workspace.")
    balance = await repo.grant_credits(
        db,
        workspace_id=workspace_id,
        request_id=request_id or f"grant-{uuid.uuid4()}",
        amount=amount,
        actor="admin",
    )
    if balance is None:
        balance = await repo.get_balance(db, workspace_id=workspace_id)
    return balance or 0


async def create_key(
    db: repo.Executor,
    *,
    workspace_id: uuid.UUID,
    name: str,
    created_by: uuid.UUID | None = None,
    rate_limit_per_minute: int | None = None,
    scope: str = keys.FULL,
) -> NewKey:
    """A new key of the workspace; made by `created_by`, or for the workspace's owner (an
    operator's key, from the command line). It acts with its creator's rights (keys.role_of)."""
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise errors.InvalidInput("A key name has 1 to 100 characters.")
    if scope not in keys.SCOPES:
        raise errors.InvalidInput(f"A key's scope is one of {', '.join(keys.SCOPES)}.")
    workspace = await repo.get_workspace(db, workspace_id=workspace_id)
    if workspace is None:
        raise errors.NotFound("No such workspace.")
    text = keys.new_key()
    key = await repo.insert_api_key(
        db,
        workspace_id=workspace_id,
        created_by=created_by or workspace.owner_id,
        name=name,
        key_hash=keys.digest(text),
        prefix=keys.display_prefix(text),
        rate_limit_per_minute=rate_limit_per_minute,
        scopes=[scope],
    )
    return NewKey(key=key, text=text)


async def list_keys(db: asyncpg.Pool, principal: principals.Principal) -> list[repo.ApiKey]:
    """The workspace's API keys (any member may list them)."""
    return await repo.list_api_keys(db, workspace_id=principal.workspace_id)


async def revoke_key(
    db: asyncpg.Pool, principal: principals.Principal, key_id: uuid.UUID
) -> repo.ApiKey:
    """Revoke at once; revoking a revoked key again is not an error (DELETE is idempotent)."""
    await repo.revoke_api_key(db, key_id=key_id, workspace_id=principal.workspace_id)
    key = await repo.get_api_key(db, key_id=key_id, workspace_id=principal.workspace_id)
    if key is None:
        raise errors.NotFound("No such API key.")
    return key


async def user_workspaces(db: asyncpg.Pool, user_id: uuid.UUID) -> list[repo.MemberWorkspace]:
    return await repo.list_user_workspaces(db, user_id=user_id)


async def describe(db: asyncpg.Pool, principal: principals.Principal) -> dict[str, Any]:
    """Who is asking and where: the user (null for an API key) and their workspaces."""
    if principal.user_id is None:
        own = await _key_workspace(db, principal)
        return {"auth": principal.kind, "user": None, "workspaces": [own], "workspace": own}
    user = await repo.get_user(db, user_id=principal.user_id)
    workspaces = await repo.list_user_workspaces(db, user_id=principal.user_id)
    current = next((ws for ws in workspaces if ws.id == principal.workspace_id), None)
    if user is None or current is None:
        raise errors.Unauthenticated()
    return {"auth": principal.kind, "user": user, "workspaces": workspaces, "workspace": current}


async def _key_workspace(db: asyncpg.Pool, principal: principals.Principal) -> dict[str, Any]:
    workspace = await repo.get_workspace(db, workspace_id=principal.workspace_id)
    if workspace is None:
        raise errors.Unauthenticated("This API key is not valid or has been revoked.")
    balance = await repo.get_balance(db, workspace_id=workspace.id)
    return {
        "id": workspace.id,
        "name": workspace.name,
        "role": principal.role,
        "balance": balance or 0,
    }
