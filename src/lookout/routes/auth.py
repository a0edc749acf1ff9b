"""Sign-up, sign-in, sign-out (here, or everywhere) and "who am I"; the session lives in an
HttpOnly cookie whose value changes at every sign-in."""

from __future__ import annotations

import ipaddress
from typing import Any

from aiohttp import web
from marshmallow import Schema

from lookout import appkeys, errors
from lookout.access import accounts, auth, sessions, throttle
from lookout.access import signup as signups
from lookout.db import repo
from lookout.routes import authn, common
from lookout.schema import accounts as schema


async def read_body(request: web.Request, loader: Schema) -> dict[str, Any]:
    """The JSON body, validated by `loader`."""
    return schema.load(loader, await common.json_body(request))


def check_origin_if_sent(request: web.Request) -> None:
    """Unauthenticated writes that set or drop the cookie must not be forgeable cross-site."""
    origin = request.headers.get("Origin")
    if origin is not None and not authn.origin_allowed(request, origin):
        raise errors.Forbidden("This request did not come from a Lookout page (Origin check).")


async def signup(request: web.Request) -> web.Response:
    check_origin_if_sent(request)
    body = await read_body(request, schema.SignupSchema())
    settings = request.app[appkeys.SETTINGS]
    signups.check_policy(settings, body.get("invite"))
    redis, ip = request.app[appkeys.REDIS], client_address(request, settings.forwarded_hops)
    await throttle.signup_attempt(redis, ip=ip, limit=settings.signups_per_hour)
    try:
        user, workspace = await signups.create_account(request.app[appkeys.DB], settings, **body)
    except Exception:
        await throttle.signup_failed(redis, ip=ip)
        raise
    data = schema.AccountSchema().dump({"user": user, "workspace": workspace})
    response = common.ok(request, data, status=201)
    await start_session(request, response, user)
    return response


async def login(request: web.Request) -> web.Response:
    check_origin_if_sent(request)
    body = await read_body(request, schema.LoginSchema())
    user = await check_password(request, **body)
    response = common.ok(request, schema.SignedInSchema().dump({"user": user}))
    await start_session(request, response, user)
    return response


async def logout(request: web.Request) -> web.Response:
    check_origin_if_sent(request)
    await end_session(request)
    response = common.ok(request, {"signed_out": True})
    drop_cookie(request, response)
    return response


async def logout_everywhere(request: web.Request) -> web.Response:
    """End every session of the signed-in user (every browser, every copied cookie)."""
    user = await authn.session_user(request)
    if user is None:
        raise errors.Unauthenticated()
    authn.check_origin(request)
    ended = await sessions.end_all(request.app[appkeys.DB], user.id)
    response = common.ok(request, {"signed_out": True, "sessions_ended": ended})
    drop_cookie(request, response)
    return response


async def end_session(request: web.Request) -> None:
    """Forget the session the request's cookie names, if any."""
    token = authn.session_token(request)
    if token is not None:
        await sessions.end(request.app[appkeys.DB], token)


def drop_cookie(request: web.Request, response: web.Response) -> None:
    secure = request.app[appkeys.SETTINGS].cookie_secure
    response.del_cookie(auth.COOKIE, path="/", httponly=True, samesite="Lax", secure=secure)


async def me(request: web.Request) -> web.Response:
    principal = await authn.authenticate(request)
    data = await accounts.describe(request.app[appkeys.DB], principal)
    return common.ok(request, schema.MeSchema().dump(data))


async def check_password(request: web.Request, *, email: str, password: str) -> repo.User:
    """The user, when the password is right and the throttle allows another attempt."""
    ip = client_address(request, request.app[appkeys.SETTINGS].forwarded_hops)
    return await sessions.sign_in(
        request.app[appkeys.DB], request.app[appkeys.REDIS], email=email, password=password, ip=ip
    )


async def start_session(request: web.Request, response: web.Response, user: repo.User) -> None:
    """A new session for `user`; the one the browser held before (if any) ends, so a session id
    planted before sign-in is never the signed-in one."""
    settings = request.app[appkeys.SETTINGS]
    await end_session(request)
    token = await auth.new_session(request.app[appkeys.DB], settings, user.id)
    response.set_cookie(
        auth.COOKIE,
        token,
        max_age=settings.session_days * 24 * 3600,
        path="/",
        httponly=True,
        samesite="Lax",
        secure=settings.cookie_secure,
    )


def client_address(request: web.Request, hops: int) -> str:
    """The address sign-in attempts are counted by: the peer's, or behind `hops` proxies
    (LOOKOUT_FORWARDED_HOPS; Heroku's router is 1), the one the outermost proxy saw, which is
    the hops-th entry of X-Forwarded-For from the right. The entries left of it are whatever the
    client sent, so they are never read; a request with fewer entries did not come through the
    proxies, and its peer counts."""
    peer = request.remote or "unknown"
    if hops <= 0:
        return peer
    forwarded = [
        entry.strip()
        for header in request.headers.getall("X-Forwarded-For", [])
        for entry in header.split(",")
    ]
    if len(forwarded) < hops:
        return peer
    try:
        return str(ipaddress.ip_address(forwarded[-hops]))
    except ValueError:
        return peer
