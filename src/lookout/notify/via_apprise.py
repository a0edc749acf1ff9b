"""Sending through Apprise: its hosts checked first and again in each lookup it makes, its
blocking call off the event loop, its complaints captured per call (and stripped of the URL's
secrets) instead of logged."""

from __future__ import annotations

import asyncio
from typing import Any

from lookout import errors
from lookout.capabilities import guard
from lookout.notify import apprise_log, channels, reach
from lookout.settings import Settings

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 10.0
# A stuck SMTP exchange cannot be cancelled inside its thread; we stop waiting for it.
CALL_TIMEOUT_S = 30.0
MAX_ERROR = 500


async def send(url: str, title: str, body: str, settings: Settings) -> None:
    """Notify through Apprise; BlockedDestination, or UpstreamError saying why it failed."""
    channel = channels.parse(url)
    await reach.check_hosts(channel.hosts, settings)
    rules = reach.policy(settings)
    try:
        error = await asyncio.wait_for(
            asyncio.to_thread(_notify, url, title, body, rules), timeout=CALL_TIMEOUT_S
        )
    except errors.BlockedDestination as exc:
        raise reach.refusal(exc) from None
    except TimeoutError:
        raise errors.UpstreamError(
            f"{channel.display} did not answer within {CALL_TIMEOUT_S:g} s."
        ) from None
    if error is not None:
        raise errors.UpstreamError(f"{channel.display}: {error}")


def _notify(url: str, title: str, body: str, rules: guard.Policy) -> str | None:
    """Runs in a worker thread: None when sent, else what Apprise said (secrets masked);
    BlockedDestination when a name it looked up resolved somewhere `rules` refuse."""
    with apprise_log.capturing() as said, reach.guarded(rules) as lookups:
        try:
            service: Any = channels.plugin(url)
            service.socket_connect_timeout = CONNECT_TIMEOUT_S
            service.socket_read_timeout = READ_TIMEOUT_S
            sent = bool(service.notify(body=body, title=title))
        except Exception as exc:  # a service's own bug must not take the delivery loop down
            sent = False
            said.append(f"{type(exc).__name__}: {exc}")
    if lookups.refused is not None:
        raise lookups.refused
    if sent:
        return None
    reason = " ".join(said[-2:]) or "the service did not accept the notification"
    return channels.redact(reason, url)[:MAX_ERROR]
