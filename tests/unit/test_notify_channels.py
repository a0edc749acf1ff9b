"""Target URLs: which services Lookout sends to, where a send connects, what members see."""

from __future__ import annotations

import pytest

from lookout import errors
from lookout.notify import channels


@pytest.mark.parametrize(
    ("url", "kind", "hosts", "shown"),
    [
        ("https://hooks.example.com/in/S3CRETPATH?key=S3CRETKEY", "webhook",
         ("hooks.example.com",), "https://hooks.example.com/…"),
        ("json://user:S3CRETPW@notify.example.org:8080/S3CRETPATH", "apprise",
         ("notify.example.org",), "json://notify.example.org:8080/…"),
        ("ntfys://ntfy.example.org/S3CRETTOPIC", "apprise", ("ntfy.example.org",),
         "ntfys://ntfy.example.org/…"),
        ("ntfy://S3CRETTOPIC", "apprise", (), "ntfy://s…"),
        ("discord://123456789012345678/S3CRETTOKEN", "apprise", (), "discord://1…/…"),
        ("slack://T1JJ3T3L2/A1BRTD4JD/S3CRETTOKENxyz", "apprise", (), "slack://t…/…"),
        ("mailtos://user:S3CRETPW@mail.example.com?to=a@example.com", "apprise",
         ("mail.example.com",), "mailtos://mail.example.com/…"),
        ("mailtos://user:S3CRETPW@example.com?smtp=smtp.relay.example.net", "apprise",
         ("smtp.relay.example.net",), "mailtos://example.com/…"),
    ],
)  # fmt: skip
def test_a_url_gives_its_kind_the_hosts_it_reaches_and_a_secret_free_display(
    url: str, kind: str, hosts: tuple[str, ...], shown: str
) -> None:
    channel = channels.parse(url)

    assert (channel.kind, channel.hosts, channel.display) == (kind, hosts, shown)
    assert "S3CRET" not in channel.display


@pytest.mark.parametrize(
    "url",
    ["windows://", "syslog://localhost", "mqtt://broker.example.com/topic", "ftp://x.example",
     "not a url", "discord://", "https:///nohost"],
)  # fmt: skip
def test_local_raw_socket_and_broken_urls_are_refused(url: str) -> None:
    with pytest.raises(errors.InvalidInput):
        channels.parse(url)


def test_the_apprise_service_never_follows_redirects_nor_discovers_servers() -> None:
    service = channels.plugin("matrixs://user:pw@matrix.example.org/#room?redirect=yes")

    assert service.redirects is False
    assert service.discovery is False


def test_redact_masks_every_secret_piece_of_the_url_but_keeps_the_host() -> None:
    url = "json://user:S3CRETPW@notify.example.org/S3CRETPATH?token=S3CRETQ"
    said = "POST to json://notify.example.org/S3CRETPATH?token=S3CRETQ failed (user S3CRETPW)"

    redacted = channels.redact(said, url)

    assert "S3CRET" not in redacted
    assert "notify.example.org" in redacted
