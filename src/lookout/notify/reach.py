"""May a notification go there? The SSRF rules of fetches, applied to notification hosts.

Webhooks are sent through the guarded fetch session, whose resolver pins each connection to the
addresses it checked. Apprise opens its own connections (requests, smtplib) in a worker thread, so
its hosts are checked twice: here before each send (a clear refusal before anything is tried),
and inside the very lookup whose answer it connects to (`guarded`): a name that re-resolves
inwards between the two (DNS rebinding) is refused too.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

from lookout import errors
from lookout.capabilities import addresses, guard
from lookout.settings import Settings


def settings_for(settings: Settings) -> Settings:
    """The fetch settings notifications use: private hosts only if the operator allowed them."""
    allow = settings.allow_private_networks or settings.notify_allow_private
    # Ports are not limited: SMTP and self-hosted services listen where they like.
    return settings.replace(allow_private_networks=allow, allowed_ports=())


def policy(settings: Settings) -> guard.Policy:
    return guard.Policy.from_settings(settings_for(settings))


async def check_hosts(hosts: tuple[str, ...], settings: Settings) -> None:
    """BlockedDestination unless every address of every host is allowed; FetchFailed if a host
    does not resolve."""
    try:
        await _check(hosts, policy(settings))
    except errors.BlockedDestination as exc:
        raise refusal(exc) from None


RULE_PRIVATE = "public hosts only (LOOKOUT_NOTIFY_ALLOW_PRIVATE is off)"


def rule_of(exc: errors.BlockedDestination) -> str:
    """The rule that refused a notification host: the fetcher's, said for notifications."""
    rule = str(exc.details.get("rule") or guard.RULE_PRIVATE)
    return RULE_PRIVATE if rule == guard.RULE_PRIVATE else rule


def refusal(exc: errors.BlockedDestination, host: str | None = None) -> errors.BlockedDestination:
    """The fetcher's refusal, said for a notification (to `host`, else the refused one)."""
    host = host or str(exc.details.get("destination"))
    rule = rule_of(exc)
    return errors.BlockedDestination(
        f"Lookout does not notify {host}: {exc.details.get('reason')} (rule: {rule}). "
        "Notifications go to public hosts only, unless the operator sets "
        "LOOKOUT_NOTIFY_ALLOW_PRIVATE=1.",
        destination=host,
        reason=exc.details.get("reason"),
        rule=rule,
    )


async def _check(hosts: tuple[str, ...], rules: guard.Policy) -> None:
    for host in hosts:
        ip = addresses.parse_ip(host)
        if ip is not None:
            rules.check_ip(host, ip)
            continue
        rules.check_name(host)
        try:
            await guard.GuardedResolver(rules).resolve(host, 0, socket.AF_UNSPEC)
        except OSError as exc:
            raise errors.FetchFailed(f"Could not resolve {host}: {exc}", reason="dns") from None


@dataclasses.dataclass
class Guard:
    """The rules a sending thread resolves under, and the first name they refused."""

    rules: guard.Policy
    refused: errors.BlockedDestination | None = None


_guard: contextvars.ContextVar[Guard | None] = contextvars.ContextVar("notify_guard", default=None)
_system_getaddrinfo = socket.getaddrinfo


@contextlib.contextmanager
def guarded(rules: guard.Policy) -> Iterator[Guard]:
    """Inside, every name this thread (context) resolves is checked against `rules` in the lookup
    whose answer the library then connects to; a refused one fails that lookup (the library sees
    a name that does not resolve) and is kept on the guard for the caller to raise."""
    state = Guard(rules)
    token = _guard.set(state)
    try:
        yield state
    finally:
        _guard.reset(token)


def _getaddrinfo(  # the signature of socket.getaddrinfo, which callers may pass by keyword
    host: Any,
    port: Any,
    family: int = 0,
    type: int = 0,
    proto: int = 0,
    flags: int = 0,
) -> Any:
    state = _guard.get()
    if state is None:
        return _system_getaddrinfo(host, port, family, type, proto, flags)
    name = host.decode("idna") if isinstance(host, bytes) else str(host)
    try:
        ip = addresses.parse_ip(name)
        if ip is not None:
            state.rules.check_ip(name, ip)
        else:
            state.rules.check_name(name)
        answers = _system_getaddrinfo(host, port, family, type, proto, flags)
        for *_, sockaddr in answers:
            state.rules.check_ip(name, ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0]))
    except errors.BlockedDestination as exc:
        state.refused = state.refused or exc
        raise socket.gaierror(socket.EAI_FAIL, str(exc)) from None
    return answers


# Process-wide, once: only a context inside `guarded` sees a difference.
socket.getaddrinfo = _getaddrinfo
