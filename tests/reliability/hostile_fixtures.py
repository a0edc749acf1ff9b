"""What the hostile-input and load tests share: a network sandbox, a real port, a leak watch and
the JSON figures that `report.py` renders into docs/RELIABILITY.md.

The sandbox is the suite's safety net. Generated and hostile inputs aim URLs at every kind of
address; inside a sandboxed test no name is looked up in real DNS (a table answers, anything else
does not exist) and no socket connects anywhere but loopback (the attempt fails as an unreachable
network and is counted). So a regression in the SSRF guard, or a generated URL the guard rightly
lets through, never sends a packet off this machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import errno
import io
import ipaddress
import json
import logging
import socket
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from lookout import logs

__all__ = ["leak_watch", "sandbox"]  # what `import *` (the reliability conftest) takes

OUTPUT = Path(__file__).resolve().parent / "output"
# Log records of the test harness itself (HTTP clients, generators), not of the service.
_HARNESS_LOGGERS = ("urllib3", "hypothesis", "schemathesis", "httpx", "httpcore", "asyncio")


def write_figures(stem: str, figures: dict[str, Any]) -> Path:
    """tests/reliability/output/<stem>.json (gitignored), and the figures printed."""
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"{stem}.json"
    stamped = {**figures, "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    path.write_text(json.dumps(stamped, indent=2, default=str) + "\n")
    print(f"\n[{stem}] " + json.dumps(figures, default=str))
    return path


def merge_figures(stem: str, key: str, figures: dict[str, Any]) -> Path:
    """Set `key` in output/<stem>.json, keeping the other keys (one entry per test)."""
    path = OUTPUT / f"{stem}.json"
    try:
        current = json.loads(path.read_text())
    except (OSError, ValueError):
        current = {}
    entries = current.get("entries", {})
    entries[key] = figures
    return write_figures(stem, {**current, "entries": entries})


# -- the network sandbox ---------------------------------------------------------------------


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    ip = _address(host)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip is not None and ip.is_loopback


@dataclasses.dataclass
class Sandbox:
    """DNS from `names` ("*.example" matches every subdomain); connections to loopback only."""

    names: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    refused: list[str] = dataclasses.field(default_factory=list)
    lookups: list[str] = dataclasses.field(default_factory=list)

    def resolve(self, name: str) -> list[str] | None:
        name = name.lower().rstrip(".")
        if name in self.names:
            return self.names[name]
        for pattern, found in self.names.items():
            if pattern.startswith("*.") and name.endswith(pattern[1:]):
                return found
        return None

    def check(self, address: Any) -> None:
        if not isinstance(address, tuple) or is_loopback(str(address[0])):
            return  # a Unix socket, or loopback
        self.refused.append(str(address[0]))
        raise OSError(errno.ENETUNREACH, f"sandbox: {address[0]} is not loopback")


def _answers(found: list[str], port: Any, family: int, kind: int) -> list[Any]:
    answers = []
    for text in found:
        ip = ipaddress.ip_address(text)
        fam = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
        if family not in (0, socket.AF_UNSPEC, fam):
            continue
        sockaddr = (
            (text, int(port or 0), 0, 0) if fam == socket.AF_INET6 else (text, int(port or 0))
        )
        answers.append((fam, kind or socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr))
    return answers


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = Sandbox()
    real_getaddrinfo = socket.getaddrinfo
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def getaddrinfo(
        host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is None or _address(name) is not None or name == "localhost":
            return real_getaddrinfo(host, port, family, type, proto, flags)
        box.lookups.append(name)
        found = box.resolve(name)
        if found is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return _answers(found, port, family, type)

    def connect(self: socket.socket, address: Any) -> None:
        box.check(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        try:
            box.check(address)
        except OSError:
            return errno.ENETUNREACH
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    return box


# -- a real port -----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def served(app: web.Application, *, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve `app` on a free port of `host` (access log on, as in production); its base URL."""
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


# -- every route that reads a body ----------------------------------------------------------

BODILESS = {"/api/auth/logout", "/api/auth/logout-everywhere"}  # POSTs that read no body


def fill_path(path: str, workspace_id: Any) -> str:
    """The route's path with the caller's own workspace and unknown ids for everything else."""
    for name in ("ws", "job_id", "key_id", "chat_id", "automation_id", "connector_id",
                 "target_id", "invite_id"):  # fmt: skip
        filler = str(workspace_id if name == "ws" else uuid.uuid4())
        path = path.replace("{" + name + "}", filler)
    return path


def reads_a_body(method: str, path: str) -> bool:
    """Writes addressed by their path alone (or by the caller's own workspace): with unknown
    ids in the path, a route could answer 404 before it reads the body."""
    if method not in ("POST", "PATCH", "PUT", "*") or path in BODILESS:
        return False
    return "{" not in path or (path.count("{") == 1 and "{ws}" in path and method != "*")


def body_routes(app: web.Application) -> list[tuple[str, str]]:
    """(method, canonical path) of every route of `app` that reads a JSON body."""
    return [
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and reads_a_body(route.method, route.resource.canonical)
    ]


# -- secrets ---------------------------------------------------------------------------------


class _Capture(logging.Handler):
    """Every record of the service at DEBUG, formatted as operators see it (JSON lines)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.text = io.StringIO()
        self.lines = 0
        self.formatter_ = logs.JsonFormatter()
        self.addFilter(logs.ContextFilter())

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(_HARNESS_LOGGERS):
            return
        try:
            line = self.formatter_.format(record)
        except Exception:  # a record that cannot format must not hide the others
            line = record.getMessage()
        self.text.write(line + "\n")
        self.lines += 1


@dataclasses.dataclass
class LeakWatch:
    """Secrets handed out during a test, and every place they must never show up again."""

    capture: _Capture
    secrets: dict[str, str] = dataclasses.field(default_factory=dict)  # value -> label
    files: list[Path] = dataclasses.field(default_factory=list)
    bodies: int = 0
    body_bytes: int = 0
    leaks: list[str] = dataclasses.field(default_factory=list)
    verified: bool = False

    def secret(self, label: str, value: str) -> None:
        """From now on `value` must not appear in an answer; nor ever in the logs."""
        if len(value) >= 8:
            self.secrets[value] = label

    def key(self, label: str, text: str) -> None:
        self.secret(label, text)
        self.secret(label + " (without lk_)", text.removeprefix("lk_"))

    def body(self, where: str, text: str | bytes) -> None:
        """An answer a client received: no secret handed out before it may be in it."""
        shown = text.decode(errors="replace") if isinstance(text, bytes) else text
        self.bodies += 1
        self.body_bytes += len(shown)
        self.leaks += [f"{label} in {where}" for value, label in self.secrets.items()
                       if value in shown]  # fmt: skip

    def log_file(self, path: Path) -> None:
        """A subprocess's log, grepped with the captured logs at the end."""
        self.files.append(path)

    def verify(self) -> None:
        """No secret in any answer seen, in the captured logs or in the log files."""
        self.verified = True
        sources = {"logs": self.capture.text.getvalue()}
        sources |= {path.name: path.read_text(errors="replace") for path in self.files}
        for where, text in sources.items():
            self.leaks += [f"{label} in {where}" for value, label in self.secrets.items()
                           if value in text]  # fmt: skip
        assert not self.leaks, self.leaks

    def figures(self) -> dict[str, Any]:
        log_bytes = len(self.capture.text.getvalue())
        log_bytes += sum(path.stat().st_size for path in self.files if path.exists())
        return {
            "secrets": len(set(self.secrets.values())),
            "answers_checked": self.bodies,
            "answer_bytes": self.body_bytes,
            "log_lines": self.capture.lines + sum(_lines(path) for path in self.files),
            "log_bytes": log_bytes,
            "leaks": len(self.leaks),
        }


def _lines(path: Path) -> int:
    return path.read_text(errors="replace").count("\n") if path.exists() else 0


@pytest.fixture
def leak_watch(request: pytest.FixtureRequest) -> Iterator[LeakWatch]:
    """Capture the service's logs at DEBUG; at the end, grep them (and every answer registered
    with `body`) for the secrets registered with `secret`; figures go to hostile-secrets.json."""
    watch = LeakWatch(capture=_Capture())
    root = logging.getLogger()
    previous = root.level
    root.addHandler(watch.capture)
    root.setLevel(logging.DEBUG)
    try:
        yield watch
    finally:
        root.removeHandler(watch.capture)
        root.setLevel(previous)
        try:
            if not watch.verified:
                watch.verify()
        finally:
            merge_figures("hostile-secrets", request.node.nodeid, watch.figures())


def strings_in(value: Any) -> Iterable[str]:
    """Every string in a JSON-like value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)
