"""May a notification go there? The SSRF rules of fetches, applied to notification hosts.

Webhooks are sent through the guarded fetch session, whose resolver pins each connection to the
addresses it checked. Apprise opens its own connections, so its hosts are resolved and checked here
right before each send: a name that re-resolves to another address between this check and
Apprise's own lookup (DNS rebinding, a window of milliseconds) is not caught.
"""

from __future__ import annotations

import socket

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
        raise errors.BlockedDestination(
            f"Lookout does not notify {exc.details.get('destination')}: "
            f"{exc.details.get('reason')}. Notifications go to public hosts only, unless the "
            "operator sets LOOKOUT_NOTIFY_ALLOW_PRIVATE=1.",
            **exc.details,
        ) from None


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
