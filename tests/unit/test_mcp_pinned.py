"""The connector HTTP client is held to the SSRF rules at connection time, whatever DNS says."""

from __future__ import annotations

import socket

import pytest
from aiohttp import abc

from lookout import errors
from lookout.capabilities import guard
from lookout.mcp import pinned
from lookout.settings import Settings

SETTINGS = Settings.from_env(
    {
        "DATABASE_URL": "postgresql://x/y",
        "REDIS_URL": "redis://x",
        "LOOKOUT_SECRET_KEY": "k" * 32,
        "LOOKOUT_PUBLIC_URL": "https://lookout.example",
    }
)


class Rebound(abc.AbstractResolver):
    """A DNS answer that now points a public-looking name at this machine."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[abc.ResolveResult]:
        return [
            {"hostname": host, "host": "127.0.0.1", "port": port, "family": socket.AF_INET,
             "proto": 0, "flags": 0}
        ]  # fmt: skip

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/mcp", "http://localhost:9/mcp"])
async def test_the_client_refuses_loopback_at_connection_time(url: str) -> None:
    async with pinned.client(SETTINGS, {}) as http:
        with pytest.raises(errors.BlockedDestination, match="loopback"):
            await http.post(url, json={})


async def test_a_name_rebound_to_a_private_address_is_refused_when_connecting() -> None:
    backend = pinned.backend(guard.Policy(), resolver=Rebound())

    refusal = r"public\.example resolves to a loopback address \(rule: public hosts only"
    with pytest.raises(errors.BlockedDestination, match=refusal) as refused:
        await backend.connect_tcp("public.example", 443)

    # the rule is named; the internal address the name resolved to is not echoed
    assert "127.0.0.1" not in str(refused.value.message) + str(refused.value.details)
    assert refused.value.details["rule"] == guard.RULE_PRIVATE


async def test_local_sockets_are_refused() -> None:
    backend = pinned.backend(guard.Policy(allow_private=True))

    with pytest.raises(errors.BlockedDestination):
        await backend.connect_unix_socket("/var/run/docker.sock")
