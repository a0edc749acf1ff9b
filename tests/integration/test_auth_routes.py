"""Sign-up, sign-in (throttled), sign-out and /api/me over HTTP, against real Postgres and Redis."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any

import asyncpg
import pytest

from lookout.access import auth, throttle
from lookout.db import repo
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


def _cookie(response: Any) -> Any:
    jar: SimpleCookie = SimpleCookie()
    jar.load(response.headers["Set-Cookie"])
    return jar[auth.COOKIE]


async def _login(client: Any, email: str, password: str, **kwargs: Any) -> Any:
    return await client.post(
        "/api/auth/login", json={"email": email, "password": password}, **kwargs
    )


async def test_signup_then_me_then_logout_then_me_is_401(new_client: NewClient) -> None:
    # Given a visitor who signs up
    client = await new_client()
    response = await client.post(
        "/api/auth/signup", json={"email": "ada@example.com", "password": PASSWORD}
    )
    account = await data_of(response, 201)
    assert account["user"]["email"] == "ada@example.com"
    assert account["workspace"] == {
        "id": account["workspace"]["id"],
        "name": "ada's workspace",
        "role": "owner",
        "balance": 100,
    }
    stolen = _cookie(response).value

    # When they ask who they are, they are signed in to their workspace
    me = await data_of(await client.get("/api/me"))
    assert me == {
        "auth": "session",
        "user": account["user"],
        "workspaces": [account["workspace"]],
        "workspace": account["workspace"],
    }

    # Then signing out ends the session, for this browser and for any copy of the cookie
    await data_of(await client.post("/api/auth/logout"))
    await error_of(await client.get("/api/me"), 401, "unauthenticated")
    replayed = await client.get("/api/me", cookies={auth.COOKIE: stolen})
    await error_of(replayed, 401, "unauthenticated")
    # and signing out again is still fine
    await data_of(await client.post("/api/auth/logout"))


async def test_signup_leaves_nothing_behind_when_a_step_fails(
    new_client: NewClient, db: asyncpg.Pool
) -> None:
    # A negative starting grant fails after the user and workspace rows were written.
    client = await new_client(default_credits=-1)

    response = await client.post(
        "/api/auth/signup", json={"email": "half@example.com", "password": PASSWORD}
    )

    await error_of(response, 400, "invalid_input")
    assert await repo.get_user_by_email(db, email="half@example.com") is None
    assert "Set-Cookie" not in response.headers


async def test_login_sets_a_session_cookie_with_safe_flags(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client()

    response = await _login(client, member.email.upper(), member.password)

    assert (await data_of(response))["user"]["id"] == str(member.user_id)
    cookie = _cookie(response)
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/"
    assert cookie["max-age"] == str(14 * 24 * 3600)
    assert not cookie["secure"]
    assert (await data_of(await client.get("/api/me")))["user"]["email"] == member.email


async def test_the_cookie_is_secure_when_configured(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client(cookie_secure=True)

    response = await _login(client, member.email, member.password)

    assert _cookie(response)["secure"] is True
    logout = await client.post("/api/auth/logout")
    expired = _cookie(logout)
    assert expired["max-age"] == "0" and expired["secure"] is True


async def test_wrong_password_and_unknown_email_answer_the_same(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client()

    wrong = await error_of(
        await _login(client, member.email, "not the password"), 401, "unauthenticated"
    )
    unknown = await error_of(
        await _login(client, "nobody@example.com", "not the password"), 401, "unauthenticated"
    )

    assert wrong == unknown
    assert wrong["message"] == "Wrong email or password."


async def test_five_failures_lock_the_address_out_of_that_email_even_with_the_right_password(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    # Given five wrong passwords for one email from one address, in any letter case
    member = await signed_up()
    client = await new_client()
    for attempt in range(throttle.PAIR_LIMIT):
        email = member.email.upper() if attempt % 2 else member.email
        await error_of(await _login(client, email, "wrong password"), 401, "unauthenticated")

    # When the right password comes next, within the window
    response = await _login(client, member.email, member.password)

    # Then it is refused with a time to wait, and no session is given
    error = await error_of(response, 429, "rate_limited")
    assert 0 < int(response.headers["Retry-After"]) <= throttle.WINDOW_S
    assert error["details"]["retry_after"] == int(response.headers["Retry-After"])
    assert "Set-Cookie" not in response.headers


async def test_parallel_guesses_get_no_more_tries_than_sequential_ones(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client()

    responses = await asyncio.gather(
        *(_login(client, member.email, f"guess {n}") for n in range(3 * throttle.PAIR_LIMIT))
    )

    statuses = sorted(response.status for response in responses)
    assert statuses.count(401) == throttle.PAIR_LIMIT
    assert statuses.count(429) == 2 * throttle.PAIR_LIMIT


async def test_a_success_clears_the_email_failures(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client()
    for _ in range(throttle.PAIR_LIMIT - 1):
        await error_of(await _login(client, member.email, "wrong password"), 401, "unauthenticated")

    await data_of(await _login(client, member.email, member.password))

    for _ in range(throttle.PAIR_LIMIT - 1):
        await error_of(await _login(client, member.email, "wrong password"), 401, "unauthenticated")
    await data_of(await _login(client, member.email, member.password))


async def test_failures_from_elsewhere_never_lock_the_owner_out(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    # Given one proxy in front, and an attacker who failed for the owner's email well past the
    # per-pair limit (from several addresses, in any letter case)
    owner = await signed_up()
    client = await new_client(forwarded_hops=1)
    for n in range(3 * throttle.PAIR_LIMIT):
        attacker = {"X-Forwarded-For": f"203.0.113.{n % 3 + 1}"}
        email = owner.email.upper() if n % 2 else owner.email
        await _login(client, email, "wrong password", headers=attacker)
    locked = await _login(
        client, owner.email, owner.password, headers={"X-Forwarded-For": "203.0.113.1"}
    )
    await error_of(locked, 429, "rate_limited")

    # When the owner signs in with the right password from an address that did not fail
    response = await _login(
        client, owner.email, owner.password, headers={"X-Forwarded-For": "198.51.100.7"}
    )

    # Then they are in
    assert (await data_of(response))["user"]["id"] == str(owner.user_id)


async def fail_from_one_address(
    client: Any, headers: Callable[[int], dict[str, str]] = lambda n: {}
) -> None:
    """IP_LIMIT failed sign-ins, each for a different email; the n-th sends headers(n)."""
    for n in range(throttle.IP_LIMIT):
        response = await _login(client, f"guess{n}@example.com", "wrong", headers=headers(n))
        await error_of(response, 401, "unauthenticated")


async def test_twenty_failures_from_one_address_lock_it_for_every_email(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client()
    await fail_from_one_address(client)

    response = await _login(client, member.email, member.password)

    await error_of(response, 429, "rate_limited")
    assert int(response.headers["Retry-After"]) > 0


async def test_behind_a_proxy_failures_are_counted_by_the_address_it_saw(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    # Given one proxy in front (every request comes from its address) and a client that failed
    # IP_LIMIT times, the last time with a made-up address of its own left of the proxy's entry
    member = await signed_up()
    client = await new_client(forwarded_hops=1)
    guesser = {"X-Forwarded-For": "203.0.113.5"}
    forged = {"X-Forwarded-For": "198.51.100.99, 203.0.113.5"}
    await fail_from_one_address(client, lambda n: forged if n == throttle.IP_LIMIT - 1 else guesser)

    # Then that address is locked out, and another behind the same proxy is not
    locked = await _login(client, member.email, member.password, headers=guesser)
    await error_of(locked, 429, "rate_limited")
    elsewhere = {"X-Forwarded-For": "198.51.100.7"}
    await data_of(await _login(client, member.email, member.password, headers=elsewhere))


async def test_with_no_proxy_configured_x_forwarded_for_is_not_read(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    client = await new_client()
    # a new address each time: ignored
    await fail_from_one_address(client, lambda n: {"X-Forwarded-For": f"203.0.113.{n}"})

    response = await _login(
        client, member.email, member.password, headers={"X-Forwarded-For": "198.51.100.7"}
    )
    await error_of(response, 429, "rate_limited")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "ada@example.com", "password": "too short"}, "password"),
        ({"email": "not-an-email", "password": PASSWORD}, "email"),
        ({"email": "ada@example.com" + "x" * 300, "password": PASSWORD}, "email"),
        ({"email": "ada@example.com", "password": PASSWORD, "admin": True}, "admin"),
        ({"email": "ada@example.com"}, "password"),
    ],
)
async def test_signup_rejects_bad_input_naming_the_field(
    new_client: NewClient, body: dict[str, Any], field: str
) -> None:
    client = await new_client()

    response = await client.post("/api/auth/signup", json=body)

    error = await error_of(response, 400, "invalid_input")
    assert field in error["details"]["fields"]


@pytest.mark.parametrize("path", ["/api/auth/signup", "/api/auth/login"])
@pytest.mark.parametrize("raw", ["not json", "", '["a list"]'])
async def test_a_body_that_is_not_a_json_object_is_invalid_input(
    new_client: NewClient, path: str, raw: str
) -> None:
    client = await new_client()

    response = await client.post(path, data=raw, headers={"Content-Type": "application/json"})

    await error_of(response, 400, "invalid_input")


async def test_login_rejects_unknown_keys(new_client: NewClient) -> None:
    client = await new_client()

    response = await client.post(
        "/api/auth/login", json={"email": "a@example.com", "password": "x", "remember": True}
    )

    assert "remember" in (await error_of(response, 400, "invalid_input"))["details"]["fields"]


async def test_a_second_account_for_one_email_is_a_conflict(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    await signed_up("grace@example.com")
    client = await new_client()

    response = await client.post(
        "/api/auth/signup", json={"email": "Grace@Example.com", "password": PASSWORD}
    )

    await error_of(response, 409, "conflict")
    await error_of(await client.get("/api/me"), 401, "unauthenticated")


@pytest.mark.parametrize("path", ["/api/auth/signup", "/api/auth/login"])
async def test_a_cross_site_page_cannot_sign_a_visitor_in(
    signed_up: SignedUp, new_client: NewClient, path: str
) -> None:
    await signed_up("victim@example.com")
    client = await new_client()

    response = await client.post(
        path,
        json={"email": "victim@example.com", "password": PASSWORD},
        headers={"Origin": "https://evil.example"},
    )

    await error_of(response, 403, "forbidden")
    assert "Set-Cookie" not in response.headers


async def test_a_cross_origin_cookie_write_is_forbidden(signed_up: SignedUp) -> None:
    member = await signed_up()

    response = await member.client.post(
        member.keys_url(), json={"name": "x"}, headers={"Origin": "https://evil.example"}
    )

    await error_of(response, 403, "forbidden")


async def test_me_is_401_without_a_session_and_404_for_a_foreign_workspace(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    alice, bob = await signed_up(), await signed_up()
    anonymous = await new_client()

    await error_of(await anonymous.get("/api/me"), 401, "unauthenticated")
    foreign = await alice.client.get(
        "/api/me", headers={auth.WORKSPACE_HEADER: str(bob.workspace_id)}
    )
    await error_of(foreign, 404, "not_found")


async def test_me_shows_every_workspace_and_the_one_asked_for(
    signed_up: SignedUp, member_of: Callable[..., Awaitable[Member]]
) -> None:
    owner = await signed_up()
    viewer = await member_of(owner.workspace_id, "viewer")

    me = await data_of(
        await viewer.client.get("/api/me", headers={auth.WORKSPACE_HEADER: str(owner.workspace_id)})
    )

    assert {ws["role"] for ws in me["workspaces"]} == {"owner", "viewer"}
    assert me["workspace"]["id"] == str(owner.workspace_id)
    assert me["workspace"]["role"] == "viewer"
