"""The SSRF guard: a destination policy, and the resolver and connector that enforce it.

The resolver resolves a name once, checks every address and hands aiohttp only the checked ones,
so the socket goes to exactly what was checked (no second lookup, no DNS rebinding). aiohttp skips
the resolver for literal IPs, so `Policy.check_url` runs on every URL, redirects included.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Collection
from typing import Any

import aiohttp
from aiohttp import abc
from yarl import URL

from lookout import errors
from lookout.capabilities import addresses
from lookout.settings import Settings

SCHEMES = frozenset({"http", "https"})


@dataclasses.dataclass(frozen=True)
class Policy:
    """What may be fetched. `treat_as_public` lets a test stand a loopback server in for a
    public host; nothing in configuration can set it. `only_origins` ("host:port"), when set, is
    the whole allow-list: a trusted provider session may reach its configured host and port and
    nothing else, so a provider's redirect cannot walk the lifted address rules elsewhere (another
    host, or another port of a private one)."""

    allow_private: bool = False
    allowed_ports: tuple[str, ...] = ()
    treat_as_public: frozenset[addresses.IPAddress] = frozenset()
    only_origins: frozenset[str] = frozenset()

    @classmethod
    def from_settings(
        cls, settings: Settings, *, trusted: bool = False, origins: Collection[str] = ()
    ) -> Policy:
        """The policy for `settings`; `trusted` is for operator-configured provider URLs, and
        `origins` (each from `origin`) limits a session to those hosts and ports."""
        return cls(
            allow_private=settings.allow_private_networks or trusted,
            allowed_ports=() if trusted else settings.allowed_ports,
            only_origins=frozenset(origins),
        )

    def same_rules(self, other: Policy) -> bool:
        return (self.allow_private, self.allowed_ports, self.only_origins) == (
            other.allow_private,
            other.allowed_ports,
            other.only_origins,
        )

    def check_url(self, url: URL) -> URL:
        """`url` with its host in canonical form, or BlockedDestination saying why not."""
        if url.scheme not in SCHEMES or not url.raw_host:
            raise blocked(url, "it is not an http(s) URL with a host", rule=RULE_SCHEME)
        if self.only_origins and origin(url) not in self.only_origins:
            why = f"{origin(url)} is not a configured provider host and port"
            raise blocked(url, why, rule=RULE_PROVIDER)
        if url.port is not None and not addresses.port_allowed(url.port, self.allowed_ports):
            allowed = ", ".join(self.allowed_ports)
            why = f"port {url.port} is not allowed (allowed: {allowed})"
            raise blocked(url, why, rule=RULE_PORTS)
        ip = addresses.parse_ip(url.raw_host)
        if ip is None:
            self.check_name(url.raw_host, url)
            return url
        self.check_ip(url.raw_host, ip, url)
        # Browsers and libc read "2130706433" as an address; aiohttp refuses such spellings.
        return url.with_host(str(ip))

    def check_name(self, host: str, url: URL | None = None) -> None:
        reason = addresses.blocked_name_reason(host, allow_private=self.allow_private)
        if reason is not None:
            raise blocked(url or host, f"{host} is {reason}", rule=_rule_of(reason))

    def check_ip(self, host: str, ip: addresses.IPAddress, url: URL | None = None) -> None:
        if ip in self.treat_as_public:
            return
        reason = addresses.blocked_reason(ip, allow_private=self.allow_private)
        if reason is None:
            return
        # The class of the address is the answer; the address a name resolved to is not: it
        # would map the operator's internal network for whoever asks.
        said = (
            f"{host} is {reason}"
            if addresses.parse_ip(host) == ip
            else f"{host} resolves to {reason}"
        )
        raise blocked(url or host, said, rule=_rule_of(reason))


def origin(url: URL) -> str:
    """ "host:port" of `url` (the scheme's port when none is written), as allow-lists hold it."""
    return f"{(url.raw_host or '').lower().rstrip('.')}:{url.port}"


# The rules a destination can be refused by, named in every refusal (details.rule).
RULE_SCHEME = "http(s) URLs only"
RULE_PROVIDER = "a provider session reaches its configured host only"
RULE_PORTS = "LOOKOUT_ALLOWED_PORTS"
RULE_METADATA = "cloud metadata hosts are always refused"
RULE_PRIVATE = "public hosts only (LOOKOUT_ALLOW_PRIVATE_NETWORKS is off)"
RULE_SOCKET = "no local sockets"


def _rule_of(reason: str) -> str:
    return RULE_METADATA if "metadata" in reason else RULE_PRIVATE


def blocked(target: URL | str, why: str, *, rule: str) -> errors.BlockedDestination:
    """The error for a refused destination; `target` is the URL (or host) that was refused and
    `rule` the rule that refused it."""
    return errors.BlockedDestination(
        f"Refused to fetch {target}: {why} (rule: {rule}). Lookout only fetches public http(s) "
        "hosts.",
        destination=str(target),
        reason=why,
        rule=rule,
    )


class GuardedResolver(abc.AbstractResolver):
    """Resolves through `inner` and returns only addresses the policy allows (else refuses)."""

    def __init__(self, policy: Policy, inner: abc.AbstractResolver | None = None) -> None:
        self.policy = policy
        self.inner = inner or aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[abc.ResolveResult]:
        ip = addresses.parse_ip(host)
        if ip is not None:
            self.policy.check_ip(host, ip)
            return [_result(host, ip, port)]
        self.policy.check_name(host)
        answers = await self.inner.resolve(host, port, family)
        for answer in answers:
            self.policy.check_ip(host, ipaddress.ip_address(answer["host"].split("%", 1)[0]))
        return answers

    async def close(self) -> None:
        await self.inner.close()


def _result(host: str, ip: addresses.IPAddress, port: int) -> abc.ResolveResult:
    family = socket.AF_INET if ip.version == 4 else socket.AF_INET6
    return {
        "hostname": host,
        "host": str(ip),
        "port": port,
        "family": family,
        "proto": 0,
        "flags": 0,
    }


class GuardedConnector(aiohttp.TCPConnector):
    """A TCPConnector whose every connection went through the policy's resolver."""

    def __init__(
        self,
        policy: Policy,
        *,
        resolver: abc.AbstractResolver | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(resolver=GuardedResolver(policy, resolver), **kwargs)
        self.policy = policy
