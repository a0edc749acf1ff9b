"""Sign-up under LOOKOUT_SIGNUP (open, invite, closed), owner invites, the per-address throttle
and the starting credits, over HTTP against real Postgres and Redis."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from lookout.db import repo
from tests.conftest import PUBLIC_URL
from tests.integration.accounts_helpers import (  # noqa: F401 - the *_fixture are fixtures
    PASSWORD,
    Member,
    NewClient,
    data_of,
    error_of,
    member_of_fixture,
    new_client_fixture,
    signed_up_fixture,
)

SignedUp = Callable[..., Awaitable[Member]]
MemberOf = Callable[..., Awaitable[Member]]


async def _signup(
    client: Any, email: str, headers: dict[str, str] | None = None, **extra: Any
) -> Any:
    body = {"email": email, "password": PASSWORD, **extra}
    return await client.post("/api/auth/signup", json=body, headers=headers)


def _invites_url(member: Member) -> str:
    return f"/api/workspaces/{member.workspace_id}/invites"


async def _invite(owner: Member, email: str, role: str = "editor") -> dict[str, Any]:
    response = await owner.client.post(_invites_url(owner), json={"email": email, "role": role})
    made: dict[str, Any] = await data_of(response, 201)
    return made


async def test_closed_sign_up_refuses_everyone_and_makes_nothing(
    new_client: NewClient, db: asyncpg.Pool
) -> None:
    client = await new_client(signup="closed")

    response = await _signup(client, "ada@example.com")

    error = await error_of(response, 403, "forbidden")
    assert "closed" in error["message"]
    assert await repo.get_user_by_email(db, email="ada@example.com") is None
    assert "Set-Cookie" not in response.headers


async def test_invite_only_sign_up_refuses_a_visitor_without_an_invite(
    new_client: NewClient, db: asyncpg.Pool
) -> None:
    client = await new_client(signup="invite")

    response = await _signup(client, "ada@example.com")

    error = await error_of(response, 403, "forbidden")
    assert "invit" in error["message"]
    assert await repo.get_user_by_email(db, email="ada@example.com") is None


async def test_an_invited_email_signs_up_once_into_the_inviting_workspace(
    signed_up: SignedUp, new_client: NewClient, db: asyncpg.Pool
) -> None:
    # Given an owner (signed up while sign-up was open) who invites grace@ as a viewer
    owner = await signed_up()
    made = await _invite(owner, "Grace@Example.com", role="viewer")
    assert made["url"] == f"{PUBLIC_URL}/#/invite/{made['token']}"
    listed = await data_of(await owner.client.get(_invites_url(owner)))
    assert [invite["email"] for invite in listed["invites"]] == ["Grace@Example.com"]
    assert made["token"] not in str(listed)

    # When, with sign-up by invitation only, someone else tries the token, then grace@ uses it
    client = await new_client(signup="invite")
    stolen = await _signup(client, "mallory@example.com", invite=made["token"])
    joined = await _signup(client, "grace@example.com", invite=made["token"])
    again = await _signup(await new_client(signup="invite"), "grace2@example.com",
                          invite=made["token"])  # fmt: skip

    # Then only grace@ got in, as a viewer of the owner's workspace, with no workspace of her own
    await error_of(stolen, 403, "forbidden")
    assert await repo.get_user_by_email(db, email="mallory@example.com") is None
    account = await data_of(joined, 201)
    assert account["workspace"]["id"] == str(owner.workspace_id)
    assert account["workspace"]["role"] == "viewer"
    me = await data_of(await client.get("/api/me"))
    assert [ws["id"] for ws in me["workspaces"]] == [str(owner.workspace_id)]
    # and the invite is spent
    await error_of(again, 403, "forbidden")
    assert (await data_of(await owner.client.get(_invites_url(owner))))["invites"] == []


async def test_an_expired_or_revoked_invite_opens_nothing(
    signed_up: SignedUp, new_client: NewClient, db: asyncpg.Pool
) -> None:
    owner = await signed_up()
    expired = await _invite(owner, "late@example.com")
    revoked = await _invite(owner, "gone@example.com")
    await db.execute(
        "UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = $1",
        uuid.UUID(expired["invite"]["id"]),
    )
    removed = await owner.client.delete(f"{_invites_url(owner)}/{revoked['invite']['id']}")
    await data_of(removed)
    client = await new_client(signup="invite")

    late = await _signup(client, "late@example.com", invite=expired["token"])
    gone = await _signup(client, "gone@example.com", invite=revoked["token"])

    await error_of(late, 403, "forbidden")
    await error_of(gone, 403, "forbidden")


async def test_only_owners_invite_and_only_into_their_own_workspace(
    signed_up: SignedUp, member_of: MemberOf
) -> None:
    owner, stranger = await signed_up(), await signed_up()
    editor = await member_of(owner.workspace_id, "editor")

    by_editor = await editor.client.post(_invites_url(editor), json={"email": "x@example.com"})
    listed_by_editor = await editor.client.get(_invites_url(editor))
    foreign = await stranger.client.get(_invites_url(owner))
    bad_role = await owner.client.post(
        _invites_url(owner), json={"email": "x@example.com", "role": "owner"}
    )

    await error_of(by_editor, 403, "forbidden")
    await error_of(listed_by_editor, 403, "forbidden")
    await error_of(foreign, 404, "not_found")
    assert "role" in (await error_of(bad_role, 400, "invalid_input"))["details"]["fields"]


async def test_no_invites_are_made_while_sign_up_is_closed(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    owner = await signed_up()
    closed = await new_client(signup="closed")
    login = {"email": owner.email, "password": owner.password}
    await data_of(await closed.post("/api/auth/login", json=login))

    response = await closed.post(_invites_url(owner), json={"email": "x@example.com"})

    await error_of(response, 409, "conflict")


async def test_open_sign_up_starts_with_the_configured_credits_which_may_be_zero(
    new_client: NewClient,
) -> None:
    generous, none = await new_client(default_credits=250), await new_client(default_credits=0)

    rich = await data_of(await _signup(generous, "rich@example.com"), 201)
    poor = await data_of(await _signup(none, "poor@example.com"), 201)

    assert rich["workspace"]["balance"] == 250
    assert poor["workspace"]["balance"] == 0
    assert poor["workspace"]["role"] == "owner"


async def test_sign_ups_are_throttled_per_address_and_failures_do_not_count(
    new_client: NewClient,
) -> None:
    # Given one proxy in front and a limit of 2 accounts an hour per address
    client = await new_client(signups_per_hour=2, forwarded_hops=1)
    here, elsewhere = {"X-Forwarded-For": "203.0.113.9"}, {"X-Forwarded-For": "198.51.100.3"}

    # When one address makes two accounts (and fails once in between), then tries a third
    await data_of(await _signup(client, "one@example.com", headers=here), 201)
    await error_of(await _signup(client, "one@example.com", headers=here), 409, "conflict")
    await data_of(await _signup(client, "two@example.com", headers=here), 201)
    third = await _signup(client, "three@example.com", headers=here)

    # Then the third is refused with a time to wait, and another address still signs up
    await error_of(third, 429, "rate_limited")
    assert 0 < int(third.headers["Retry-After"]) <= 3600
    await data_of(await _signup(client, "four@example.com", headers=elsewhere), 201)


async def test_a_burst_of_parallel_sign_ups_cannot_pass_the_limit(new_client: NewClient) -> None:
    client = await new_client(signups_per_hour=3)

    responses = await asyncio.gather(*(_signup(client, f"burst{n}@example.com") for n in range(10)))

    statuses = sorted(response.status for response in responses)
    assert statuses.count(201) == 3 and statuses.count(429) == 7
