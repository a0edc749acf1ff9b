"""SSRF: with private networks off (the default), no spelling of a private destination is fetched.

Every test here either refuses before connecting or connects only to loopback servers.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import hypothesis
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import strategies as st

from lookout import errors
from lookout.capabilities import addresses, fetch, guard, registry, scrape
from lookout.settings import Settings
from tests.integration import webpages
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("loopback_only")

STRICT = webpages.make_settings(allow_private=False)
PUBLIC_STAND_IN = "127.0.0.2"  # a loopback address the policy is told to treat as public
NAMES = {
    "public.example": [PUBLIC_STAND_IN],
    "intranet.test": ["127.0.0.1"],
    "rebind.test": ["93.184.216.34", "127.0.0.1"],
    "v6.test": ["::1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "cloud.test": ["169.254.169.254"],
    "corp.test": ["10.1.2.3"],
}

# {port} is the port of a local server that must never see a request.
BLOCKED = [
    "http://127.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://2130706433:{port}/",
    "http://0x7f000001:{port}/",
    "http://0x7f.0.0.1:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://017700000001:{port}/",
    "http://127.0.0.1.:{port}/",
    "http://127.255.255.254:{port}/",
    "http://0.0.0.0:{port}/",
    "http://0:{port}/",
    "http://[::1]:{port}/",
    "http://[::]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://[0:0:0:0:0:ffff:7f00:0001]:{port}/",
    "http://[64:ff9b::127.0.0.1]:{port}/",
    "http://[2002:7f00:1::1]:{port}/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[ff02::1]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://198.18.0.1/",
    "http://168.63.129.16/",
    "http://[fd00:ec2::254]/",
    "http://localhost:{port}/",
    "http://app.localhost:{port}/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://intranet.test:{port}/",
    "http://rebind.test:{port}/",
    "http://v6.test:{port}/",
    "http://mapped.test:{port}/",
    "http://cloud.test/",
    "http://corp.test/",
    "file:///etc/passwd",
    "ftp://127.0.0.1:{port}/",
    "gopher://127.0.0.1:{port}/_",
    # A public-looking page that redirects inwards, in several spellings.
    "http://public.example:{public_port}/to?next=http://127.0.0.1:{port}/secret",
    "http://public.example:{public_port}/to?next=http://intranet.test:{port}/secret",
    "http://public.example:{public_port}/to?next=http://[::ffff:127.0.0.1]:{port}/secret",
    "http://public.example:{public_port}/to?next=http://2130706433:{port}/secret",
    "http://public.example:{public_port}/to?next=http://169.254.169.254/",
]


@dataclasses.dataclass
class Lab:
    secret: webpages.Site
    secret_server: TestServer
    public: webpages.Site
    public_server: TestServer
    session: aiohttp.ClientSession
    resolver: webpages.FakeResolver

    def url(self, template: str) -> str:
        return template.format(port=self.secret_server.port, public_port=self.public_server.port)


async def _redirect_to_next(request: web.Request) -> web.Response:
    raise web.HTTPFound(request.query["next"])


@pytest.fixture
async def lab(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> AsyncIterator[Lab]:
    secret = webpages.Site()
    secret.add("/", "<p>internal admin</p>")
    secret.add("/secret", "<p>internal admin</p>")
    public = webpages.Site()
    public.handle("/to", _redirect_to_next)
    public.add("/hello", "<p>public page</p>")
    secret_server = await aiohttp_server(secret.app())
    public_server = await aiohttp_server(public.app(), host=PUBLIC_STAND_IN)
    resolver = webpages.FakeResolver(NAMES)
    policy = guard.Policy(treat_as_public=frozenset({ipaddress.ip_address(PUBLIC_STAND_IN)}))
    async with fetch.open_session(STRICT, resolver=resolver, policy=policy) as session:
        yield Lab(secret, secret_server, public, public_server, session, resolver)


def test_private_networks_are_off_by_default() -> None:
    environ = {
        "DATABASE_URL": "x",
        "REDIS_URL": "x",
        "LOOKOUT_SECRET_KEY": "x",
        "LOOKOUT_PUBLIC_URL": "https://lookout.example",
    }
    assert Settings.from_env(environ).allow_private_networks is False
    allowed = Settings.from_env({**environ, "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "1"})
    assert allowed.allow_private_networks is True


def test_there_are_at_least_25_distinct_blocked_destinations() -> None:
    assert len(set(BLOCKED)) >= 25


@pytest.mark.parametrize("template", BLOCKED)
async def test_blocked_destination_and_no_request_reaches_the_server(
    lab: Lab, template: str
) -> None:
    url = lab.url(template)
    with pytest.raises(errors.BlockedDestination) as caught:
        await fetch.fetch(url, settings=STRICT, session=lab.session)
    assert caught.value.code == "blocked_destination"
    assert caught.value.details["url"] == url
    assert "Refused to fetch" in caught.value.message
    assert lab.secret.hits == []
    assert len(lab.public.hits) == ("next=" in template)  # the redirect itself was served


@pytest.mark.parametrize(
    ("name", "said", "rule"),
    [
        ("intranet.test", "a loopback address", guard.RULE_PRIVATE),
        ("corp.test", "a private address", guard.RULE_PRIVATE),
        ("rebind.test", "a loopback address", guard.RULE_PRIVATE),
        ("v6.test", "a loopback address", guard.RULE_PRIVATE),
        ("cloud.test", "a cloud metadata address", guard.RULE_METADATA),
    ],
)
async def test_a_refusal_names_the_rule_but_not_the_internal_address(
    lab: Lab, name: str, said: str, rule: str
) -> None:
    url = lab.url(f"http://{name}:{{port}}/")

    with pytest.raises(errors.BlockedDestination) as caught:
        await fetch.fetch(url, settings=STRICT, session=lab.session)

    refusal = caught.value
    assert f"{name} resolves to {said} (rule: {rule})" in refusal.message
    assert refusal.details["rule"] == rule
    shown = refusal.message + repr(refusal.details)
    for address in NAMES[name]:
        if addresses.blocked_reason(ipaddress.ip_address(address)) is not None:
            assert address not in shown
    assert lab.secret.hits == []


async def test_the_stand_in_public_host_is_really_reachable(lab: Lab) -> None:
    """The control: without it, the redirect cases above could pass by failing to connect."""
    url = lab.url("http://public.example:{public_port}/hello")
    result = await fetch.fetch(url, settings=STRICT, session=lab.session)
    assert result.body == b"<p>public page</p>"
    assert lab.resolver.asked == ["public.example"]  # one lookup, then the checked address


async def test_switching_private_networks_on_reaches_the_same_server(lab: Lab) -> None:
    """The control for the literal and resolved cases: the same URLs do arrive when allowed."""
    allowed = webpages.make_settings(allow_private=True)
    for template in ("http://2130706433:{port}/", "http://intranet.test:{port}/"):
        result = await fetch.fetch(lab.url(template), settings=allowed, resolver=lab.resolver)
        assert result.body == b"<p>internal admin</p>"
    assert len(lab.secret.hits) == 2


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/",
        "http://cloud.test/",
    ],
)
async def test_metadata_stays_blocked_when_private_networks_are_allowed(url: str) -> None:
    allowed = webpages.make_settings(allow_private=True)
    with pytest.raises(errors.BlockedDestination, match="metadata"):
        await fetch.fetch(url, settings=allowed, resolver=webpages.FakeResolver(NAMES))


async def test_ports_outside_the_allowed_list_are_refused(lab: Lab) -> None:
    url = lab.url("http://127.0.0.1:{port}/")
    only_web = webpages.make_settings(allow_private=True, allowed_ports=("80", "443"))
    with pytest.raises(errors.BlockedDestination, match=f"port {lab.secret_server.port}"):
        await fetch.fetch(url, settings=only_web)
    in_range = only_web.replace(allowed_ports=("80", f"1024-{lab.secret_server.port}"))
    assert (await fetch.fetch(url, settings=in_range)).status == 200
    assert len(lab.secret.hits) == 1


async def test_a_verb_given_a_plain_session_still_goes_through_the_guard(lab: Lab) -> None:
    url = lab.url("http://127.0.0.1:{port}/secret")
    async with aiohttp.ClientSession() as plain:
        ctx, _ = webpages.context(STRICT, plain)
        output = await scrape.execute(
            registry.validate_input(registry.get("web.scrape"), {"url": url}), ctx
        )
    assert output["pages"][0]["error"]["code"] == "blocked_destination"
    assert lab.secret.hits == []


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("3232235777", "192.168.1.1"),
        ("0xC0A80101", "192.168.1.1"),
        ("192.168.257", "192.168.1.1"),
        ("[::FFFF:127.0.0.1]", "::ffff:7f00:1"),
        ("[fe80::1%25eth0]", "fe80::1"),
        ("example.com", None),
        ("256.1.1.1", None),
        ("1.2.3.4.5", None),
        ("08.0.0.1", None),
        ("0xg1", None),
    ],
)
def test_every_ipv4_spelling_is_understood(host: str, expected: str | None) -> None:
    parsed = addresses.parse_ip(host)
    assert (str(parsed) if parsed else None) == expected


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert addresses.blocked_reason(ipaddress.ip_address(address)) is None


_PART = st.one_of(
    st.integers(0, 2**32 - 1).map(str),
    st.integers(0, 2**32 - 1).map(lambda n: f"0x{n:x}"),
    st.integers(0, 2**32 - 1).map(lambda n: f"0{n:o}"),
    st.text("0123456789abcdefx", min_size=1, max_size=12),
)


@hypothesis.settings(max_examples=500)  # about one in eight spellings is one libc accepts
@hypothesis.given(st.lists(_PART, min_size=1, max_size=5).map(".".join))
def test_every_spelling_libc_accepts_is_parsed_to_the_same_address(host: str) -> None:
    """The security-relevant direction: whatever inet_aton (and so getaddrinfo) would turn into
    an address, the guard sees as that address too."""
    try:
        packed = socket.inet_aton(host)
    except OSError:
        return
    assert addresses.parse_ip(host) == ipaddress.IPv4Address(packed)
