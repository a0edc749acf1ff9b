"""Every Redis key Lookout writes, in one place (foundation, layer 1): all start `lookout:`.

Dramatiq's own keys (`dramatiq:...`) are the broker's. A new kind of key is added here, so two
features never pick the same prefix and `redis-cli --scan --pattern 'lookout:*'` finds them all.
"""

from __future__ import annotations

import uuid

PREFIX = "lookout:"
SIGNIN = PREFIX + "signin"  # :pair:<sha256 of email+ip>, :ip:<ip> (access.throttle)
SIGNUP_IP = PREFIX + "signup:ip"  # :<ip> (access.throttle)


def rate_limit(subject: str) -> str:
    """A key's (or user's) request window (access.ratelimit)."""
    return f"{PREFIX}rl:{subject}"


def key_revoked(key_id: uuid.UUID) -> str:
    """Set when an API key is revoked, so every web process's cache refuses it (access.keys)."""
    return f"{PREFIX}key-revoked:{key_id}"


def pace(name: str) -> str:
    """A provider's next free slot, shared by every process (capabilities.providers.limiter)."""
    return f"{PREFIX}pace:{name}"


def cache_index(name: str) -> str:
    """A provider cache's index of entries; its entries are `cache_index(name) + ":" + key`."""
    return f"{PREFIX}cache:{name}"


def chat_events(chat_id: uuid.UUID) -> str:
    """A chat's event stream (chat.events)."""
    return f"{PREFIX}chat:{chat_id}:events"


def chat_active(chat_id: uuid.UUID) -> str:
    return f"{PREFIX}chat:{chat_id}:active"


def chat_written(chat_id: uuid.UUID) -> str:
    return f"{PREFIX}chat:{chat_id}:written"


def chat_listened(chat_id: uuid.UUID) -> str:
    """Set while a web process's hub reads the chat (chat.hub, chat.events)."""
    return f"{PREFIX}chat:{chat_id}:listened"


def mcp_tools(connector_id: uuid.UUID) -> str:
    """A connector's cached tool list (mcp.tool_cache)."""
    return f"{PREFIX}mcp-tools:{connector_id}"


def probe(probe_id: str) -> str:
    """A worker round-trip probe's answer (actors.maintenance)."""
    return f"{PREFIX}probe:{probe_id}"
