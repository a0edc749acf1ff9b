"""Sessions over HTTP: a new id at every sign-in, sign-out everywhere, the idle timeout, Secure
cookies behind an https public URL, and Origin checks that never trust the Host header."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any

import asyncpg
from aiohttp.test_utils import TestServer

from lookout import app, devservices
from lookout.access import auth
from lookout.settings import Settings
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


async def _login(client: Any, member: Member, **kwargs: Any) -> Any:
    body = {"email": member.email, "password": member.password}
    return await client.post("/api/auth/login", json=body, **kwargs)


async def _me(client: Any, token: str) -> int:
    response = await client.get("/api/me", cookies={auth.COOKIE: token})
    return response.status


async def test_signing_in_gives_a_new_session_id_and_ends_the_one_the_browser_had(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    # Given a browser holding a session id (one planted in it, say)
    member = await signed_up()
    client = await new_client()
    planted = _cookie(await _login(client, member)).value
    assert await _me(client, planted) == 200

    # When it signs in again
    response = await _login(client, member, cookies={auth.COOKIE: planted})

    # Then it holds a new id, and the old one no longer opens anything
    fresh = _cookie(response).value
    assert fresh != planted
    assert await _me(client, fresh) == 200
    assert await _me(client, planted) == 401


async def test_sign_out_everywhere_ends_every_session_of_the_user_and_only_theirs(
    signed_up: SignedUp, new_client: NewClient, db: asyncpg.Pool
) -> None:
    # Given a user signed in on three browsers, and another user signed in too
    member, other = await signed_up(), await signed_up()
    browsers = [member.client, await new_client(), await new_client()]
    tokens = [_cookie(await _login(browser, member)).value for browser in browsers]

    # When they sign out everywhere from one of them
    response = await browsers[0].post("/api/auth/logout-everywhere")

    # Then every session of theirs is gone, the other user's is not (three: the first browser's
    # sign-in replaced its sign-up session)
    data = await data_of(response)
    assert data == {"signed_out": True, "sessions_ended": 3}
    assert _cookie(response)["max-age"] == "0"
    for browser, token in zip(browsers, tokens, strict=True):
        assert await _me(browser, token) == 401
    await data_of(await other.client.get("/api/me"))
    left = await db.fetchval("SELECT count(*) FROM sessions WHERE user_id = $1", member.user_id)
    assert left == 0


async def test_sign_out_everywhere_needs_a_session_and_our_own_origin(
    signed_up: SignedUp, new_client: NewClient
) -> None:
    member = await signed_up()
    stranger = await new_client()

    anonymous = await stranger.post("/api/auth/logout-everywhere")
    cross_site = await member.client.post(
        "/api/auth/logout-everywhere", headers={"Origin": "https://evil.example"}
    )

    await error_of(anonymous, 401, "unauthenticated")
    await error_of(cross_site, 403, "forbidden")
    await data_of(await member.client.get("/api/me"))  # still signed in


async def test_a_session_idle_past_the_timeout_ends_and_use_keeps_one_alive(
    signed_up: SignedUp, db: asyncpg.Pool
) -> None:
    # Given two sessions, one unused for longer than LOOKOUT_SESSION_IDLE_HOURS (72 by
    # default) and one unused for a little less
    idle, active = await signed_up(), await signed_up()
    await db.execute(
        "UPDATE sessions SET last_seen_at = now() - interval '72 h 1 min' WHERE user_id = $1",
        idle.user_id,
    )
    await db.execute(
        "UPDATE sessions SET last_seen_at = now() - interval '71 hours' WHERE user_id = $1",
        active.user_id,
    )

    # When each is used
    idle_answer = await idle.client.get("/api/me")
    await data_of(await active.client.get("/api/me"))

    # Then the idle one is refused, and the used one counts as seen now
    await error_of(idle_answer, 401, "unauthenticated")
    seen = await db.fetchval(
        "SELECT now() - last_seen_at < interval '1 minute' FROM sessions WHERE user_id = $1",
        active.user_id,
    )
    assert seen is True


async def test_the_idle_timeout_is_a_setting(
    signed_up: SignedUp, new_client: NewClient, db: asyncpg.Pool
) -> None:
    # Given one user's sessions on an app with the default timeout (72 h) and on one with 1 h,
    # both unused for 2 hours
    member = await signed_up()
    strict = await new_client(session_idle_hours=1)
    await _login(strict, member)
    await db.execute(
        "UPDATE sessions SET last_seen_at = now() - interval '2 hours' WHERE user_id = $1",
        member.user_id,
    )

    # Then only the strict app refuses its session
    await data_of(await member.client.get("/api/me"))
    await error_of(await strict.get("/api/me"), 401, "unauthenticated")


async def test_behind_an_https_public_url_the_cookie_is_secure_by_default(
    settings: Settings, aiohttp_client: Any
) -> None:
    # Given settings read from an environment that names an https public URL, and no
    # LOOKOUT_COOKIE_SECURE
    environ = {
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "LOOKOUT_SECRET_KEY": settings.secret_key,
        "LOOKOUT_PUBLIC_URL": "https://lookout.example",
        "LOOKOUT_SIGNUP": "open",
    }
    https = Settings.from_env(environ)
    server = TestServer(app.create_app(https), port=devservices.free_port())
    client = await aiohttp_client(server, headers={"Origin": "https://lookout.example"})

    # When someone signs up
    response = await client.post(
        "/api/auth/signup", json={"email": "tls@example.com", "password": PASSWORD}
    )

    # Then their cookie is only sent over https
    await data_of(response, 201)
    assert _cookie(response)["secure"] is True


async def test_an_origin_matching_only_a_forged_host_header_is_refused(
    signed_up: SignedUp,
) -> None:
    # A page on evil.test whose request names Host: evil.test (DNS rebinding does) is not ours:
    # our origin is LOOKOUT_PUBLIC_URL's (or LOOKOUT_ALLOWED_ORIGINS), whatever Host says.
    member = await signed_up()
    forged = {"Origin": "http://evil.test", "Host": "evil.test"}

    write = await member.client.post(member.keys_url(), json={"name": "x"}, headers=forged)
    login = await _login(member.client, member, headers=forged)

    await error_of(write, 403, "forbidden")
    await error_of(login, 403, "forbidden")


async def test_an_allowed_origin_is_ours_too(signed_up: SignedUp, new_client: NewClient) -> None:
    member = await signed_up()
    client = await new_client(allowed_origins=("https://admin.lookout.test",))
    token = _cookie(await _login(client, member)).value

    response = await client.post(
        member.keys_url(),
        json={"name": "x"},
        cookies={auth.COOKIE: token},
        headers={"Origin": "https://admin.lookout.test"},
    )

    await data_of(response, 201)
