"""Signed webhooks: one POST through the guarded fetch session (every address checked, the
connection pinned to it), no redirects, an answer within 10 s."""

from __future__ import annotations

import asyncio
import urllib.parse

import aiohttp
from yarl import URL

from lookout import errors
from lookout.capabilities import fetch, guard
from lookout.notify import message, reach
from lookout.settings import Settings

TIMEOUT_S = 10.0
_READ_LIMIT = 64 * 1024


async def post(
    session: aiohttp.ClientSession | None,
    settings: Settings,
    url: str,
    raw: bytes,
    *,
    secret: str,
    delivery_id: str,
    event: str,
) -> None:
    """Send `raw`, signed; UpstreamError (or BlockedDestination) saying why it was not taken."""
    host = urllib.parse.urlsplit(url).hostname or "the webhook"
    headers = {
        "Content-Type": "application/json",
        message.SIGNATURE_HEADER: message.sign(secret, raw),
        message.DELIVERY_HEADER: delivery_id,
        message.EVENT_HEADER: event,
    }
    async with fetch.borrow(session, reach.settings_for(settings)) as guarded:
        try:
            await _send(guarded, url, raw, headers, host)
        except errors.BlockedDestination as exc:
            # The guard names the whole URL; its path and query may be the webhook's secret.
            raise reach.refusal(exc, host) from None
        except TimeoutError:
            raise errors.UpstreamError(f"{host} did not answer within {TIMEOUT_S:g} s.") from None
        except aiohttp.ClientError as exc:
            raise errors.UpstreamError(f"Could not reach {host}: {type(exc).__name__}.") from None
        except ValueError:  # yarl names the URL it could not read: not in an answer
            raise errors.UpstreamError(f"The webhook URL for {host} is not valid.") from None


async def _send(
    session: aiohttp.ClientSession, url: str, raw: bytes, headers: dict[str, str], host: str
) -> None:
    assert isinstance(session.connector, guard.GuardedConnector)
    # aiohttp skips the resolver for literal IPs: the policy checks the URL itself too.
    target = session.connector.policy.check_url(URL(url))
    async with (
        asyncio.timeout(TIMEOUT_S),
        session.post(target, data=raw, headers=headers, allow_redirects=False) as response,
    ):
        await response.content.read(_READ_LIMIT)
        if not 200 <= response.status < 300:
            raise errors.UpstreamError(f"{host} answered HTTP {response.status}.")
