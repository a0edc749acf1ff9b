"""What a target URL means: its kind, where a send connects, and what members may see of it.

`http(s)://` URLs are Lookout's own signed webhooks. Anything else is an Apprise URL, limited to
the services listed here: each one either connects to the host written in the URL (a self-hosted
server, checked against the SSRF rules before every send) or to its vendor's fixed public API.
Local (desktop, syslog) and raw-socket services are refused.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import urllib.parse
import warnings
from typing import Any

from lookout import errors
from lookout.notify import apprise_log

WEBHOOK_SCHEMES = frozenset({"http", "https"})
# scheme -> True: Apprise connects to the URL's host; False: to the vendor's fixed API.
APPRISE_SCHEMES: dict[str, bool] = {
    **dict.fromkeys(("json", "jsons", "xml", "xmls", "form", "forms"), True),
    **dict.fromkeys(("ntfy", "ntfys", "gotify", "gotifys", "matrix", "matrixs"), True),
    **dict.fromkeys(("mmost", "mmosts", "rocket", "rockets", "mailto", "mailtos"), True),
    **dict.fromkeys(("discord", "slack", "tgram", "pover"), False),
}
EMAIL_SCHEMES = frozenset({"mailto", "mailtos"})
# Apprise services whose "host" names a fixed public API in some modes (the URL's host is a token).
_FIXED_MODES = {"ntfy": "cloud", "ntfys": "cloud", "matrix": "t2bot", "matrixs": "t2bot"}
MAX_URL = 2048
_MIN_SECRET = 3


_loading = threading.Lock()


@functools.cache
def _apprise_module() -> Any:
    """Apprise, loaded on the first Apprise URL (~0.6 s and ~10 MiB at import: not in every
    process for nobody's Apprise target, bench/footprint.py)."""
    with _loading:
        import apprise
        from apprise.plugins import N_MGR

        apprise_log.install()
        # Apprise imports its services on first use, from whichever thread; one of them imports
        # the deprecated `imghdr` (Python < 3.13). Import them all now, once, warning silenced.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            N_MGR.load_modules()  # type: ignore[no-untyped-call]  # (no annotations)
        return apprise


@dataclasses.dataclass(frozen=True)
class Channel:
    """A parsed target URL: `hosts` are where a send connects (empty: a vendor's fixed API)."""

    kind: str  # "webhook" or "apprise"
    scheme: str
    display: str
    hosts: tuple[str, ...]


def parse(url: str) -> Channel:
    """The channel of `url`; InvalidInput naming what is wrong with it."""
    url = url.strip()
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if len(url) > MAX_URL or not scheme:
        raise _invalid(
            "Give a notification URL such as https://…, json://…, slack://… or ntfy://…."
        )
    if scheme in WEBHOOK_SCHEMES:
        return _webhook(url, scheme)
    if scheme not in APPRISE_SCHEMES:
        supported = ", ".join(sorted({*APPRISE_SCHEMES, *WEBHOOK_SCHEMES}))
        raise _invalid(f"Lookout does not send to {scheme}:// URLs; it sends to {supported}.")
    return _apprise(url, scheme, plugin(url))


def plugin(url: str) -> Any:
    """Apprise's service for `url`, never following redirects or discovering other servers."""
    apprise = _apprise_module()
    found = apprise.Apprise.instantiate(url, asset=apprise.AppriseAsset(http_redirects=False))
    if found is None:
        raise _invalid("This Apprise URL is not complete or not valid for its service.")
    # A redirect or a .well-known lookup would reach a host nobody checked.
    found.redirects = False
    if hasattr(found, "discovery"):
        found.discovery = False
    return found


def _webhook(url: str, scheme: str) -> Channel:
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        raise _invalid("A webhook URL needs a host, e.g. https://hooks.example.com/lookout.")
    shown = _display(scheme, parts.hostname, parts, True)
    return Channel("webhook", scheme, shown, (parts.hostname,))


def _apprise(url: str, scheme: str, service: Any) -> Channel:
    hosts: tuple[str, ...] = ()
    if APPRISE_SCHEMES[scheme] and str(getattr(service, "mode", "")) != _FIXED_MODES.get(scheme):
        host = getattr(service, "smtp_host", None) if scheme in EMAIL_SCHEMES else None
        hosts = tuple(h.strip("[]") for h in (host or service.host,) if h)
    parts = urllib.parse.urlsplit(url)
    shown = bool(hosts) or scheme in EMAIL_SCHEMES  # an email domain is not a secret
    return Channel("apprise", scheme, _display(scheme, parts.hostname or "", parts, shown), hosts)


def _display(scheme: str, host: str, parts: urllib.parse.SplitResult, shown: bool) -> str:
    """scheme://host[:port]/… — no credentials, path or query (they hold tokens)."""
    if not shown:
        host = f"{host[:1]}…" if host else ""
    port = f":{parts.port}" if _port(parts) else ""
    rest = "/…" if parts.path.strip("/") or parts.query or parts.username else ""
    return f"{scheme}://{host}{port}{rest}"


def _port(parts: urllib.parse.SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:
        return None


def secrets_of(url: str) -> list[str]:
    """The pieces of `url` that may be secret (credentials, path, query, host tokens)."""
    parts = urllib.parse.urlsplit(url)
    pieces = [url, parts.path, parts.query, parts.username or "", parts.password or ""]
    pieces += parts.path.split("/") + [v for _, v in urllib.parse.parse_qsl(parts.query)]
    if parts.scheme.lower() in APPRISE_SCHEMES and not APPRISE_SCHEMES[parts.scheme.lower()]:
        pieces.append(parts.hostname or "")
    found = {urllib.parse.unquote(p) for p in pieces} | set(pieces)
    return sorted((p for p in found if len(p) >= _MIN_SECRET), key=len, reverse=True)


def redact(text: str, url: str) -> str:
    """`text` (an error a service answered) with every secret piece of `url` masked."""
    for piece in secrets_of(url):
        text = text.replace(piece, "***")
    return text


def _invalid(message: str) -> errors.InvalidInput:
    return errors.InvalidInput(message, fields={"url": [message]})
