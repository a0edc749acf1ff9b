"""Lookups made while Apprise sends are held to the notification rules; no other lookup is."""

from __future__ import annotations

import socket

import pytest

from lookout.capabilities import guard
from lookout.notify import reach


def test_a_lookup_outside_a_send_is_left_alone() -> None:
    [answer] = socket.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)

    assert answer[4] == ("127.0.0.1", 80)


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0x7f.1", "::1", "localhost"])
def test_a_lookup_during_a_send_refuses_what_the_rules_refuse(host: str) -> None:
    with reach.guarded(guard.Policy()) as lookups, pytest.raises(socket.gaierror):
        socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)

    assert lookups.refused is not None
    assert lookups.refused.details["destination"] == host


def test_smtplibs_way_in_is_guarded_too() -> None:
    # smtplib connects with socket.create_connection, which resolves through socket.getaddrinfo.
    with reach.guarded(guard.Policy()) as lookups, pytest.raises(socket.gaierror):
        socket.create_connection(("127.0.0.1", 25), timeout=1)

    assert lookups.refused is not None and "loopback" in lookups.refused.message


def test_allowed_addresses_resolve_and_the_guard_ends_with_the_send() -> None:
    with reach.guarded(guard.Policy()) as lookups:
        [public] = socket.getaddrinfo("93.184.216.34", 443, type=socket.SOCK_STREAM)
    with reach.guarded(guard.Policy(allow_private=True)) as allowed:
        [private] = socket.getaddrinfo("10.0.0.5", 25, type=socket.SOCK_STREAM)
    [after] = socket.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)

    assert (public[4], private[4], after[4]) == (
        ("93.184.216.34", 443),
        ("10.0.0.5", 25),
        ("127.0.0.1", 80),
    )
    assert lookups.refused is None and allowed.refused is None
