"""Which network destinations Lookout may fetch: host spellings, address classes and ports.

Pure functions, no I/O: `guard` applies them to every URL and every DNS answer.
"""

from __future__ import annotations

import ipaddress
import string

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Metadata services hand out cloud credentials, so they stay refused even when private networks are
# allowed. Some sit on ordinary-looking addresses (Azure's wireserver is a public IP).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",
        "169.254.170.2",
        "168.63.129.16",
        "100.100.100.200",
        "192.0.0.192",
        "fd00:ec2::254",
    )
)
METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"}
)
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_OCTAL = frozenset("01234567")


def parse_ip(host: str) -> IPAddress | None:
    """The address `host` denotes, in any spelling browsers or inet_aton accept; None for a name.

    "2130706433", "0x7f.1", "0177.0.0.1" and "[::ffff:7f00:1]" all denote a loopback address.
    """
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return None
    return _parse_ipv4(host[:-1] if host.endswith(".") else host)


def _parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    *head, last = [number for number in numbers if number is not None]
    if any(number > 255 for number in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    value = last
    for index, number in enumerate(head):
        value |= number << (24 - 8 * index)
    return ipaddress.IPv4Address(value)


def _ipv4_number(part: str) -> int | None:
    if part[:2] == "0x":
        digits = part[2:]
        return int(digits or "0", 16) if set(digits) <= set(string.hexdigits) else None
    if len(part) > 1 and part[0] == "0":
        return int(part[1:], 8) if set(part[1:]) <= _OCTAL else None
    return int(part) if part.isascii() and part.isdigit() else None


def blocked_reason(ip: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why `ip` must not be fetched (e.g. "a loopback address"), or None when it may be."""
    candidates = [*_embedded_ipv4(ip), ip]
    if any(candidate in METADATA_ADDRESSES for candidate in candidates):
        return "a cloud metadata address"
    if allow_private:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        candidates = [ip.ipv4_mapped]
    for candidate in candidates:
        reason = _classify(candidate)
        if reason is not None:
            return reason
    return None


def _classify(ip: IPAddress) -> str | None:
    # Order matters only for the message: the most specific class is named.
    checks = (
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "a carrier-grade NAT address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public address"),
    )
    return next((reason for matched, reason in checks if matched), None)


def _embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses that an IPv6 address carries (mapped, 6to4, Teredo, NAT64)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return []
    found = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    if ip in _NAT64:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [address for address in found if address is not None]


def blocked_name_reason(host: str, *, allow_private: bool = False) -> str | None:
    """Why a host *name* is refused before any lookup, or None."""
    name = host.strip().lower().rstrip(".")
    if name in METADATA_NAMES:
        return "a cloud metadata host"
    if not allow_private and (name == "localhost" or name.endswith(".localhost")):
        return "a loopback host"
    return None


def port_allowed(port: int, allowed: tuple[str, ...]) -> bool:
    """Whether LOOKOUT_ALLOWED_PORTS items ("443", "8000-8100") allow `port`; empty = any."""
    if not allowed:
        return True
    for item in allowed:
        low, _, high = item.partition("-")
        if int(low) <= port <= int(high or low):
            return True
    return False
