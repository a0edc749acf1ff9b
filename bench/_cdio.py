"""changedetection.io, the benchmark peer: its own virtualenv under .bench/, driven over its API.

The virtualenv is created by `pip install changedetection.io` on first use (minutes) and reused;
nothing of it is vendored or committed (.bench/ ignores itself). The server runs with its plain
HTTP fetcher and default workers, its scheduler paused (`-P true`) so that checks happen only
when a cycle is triggered (`GET /api/v1/watch?recheck_all=1`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import _pages
import _procs

ROOT = Path(__file__).resolve().parents[1] / ".bench"
VENV = ROOT / "changedetection"
PACKAGE = "changedetection.io"


def ensure_installed() -> Path:
    """The virtualenv's python, installing the package the first time."""
    ROOT.mkdir(exist_ok=True)
    (ROOT / ".gitignore").write_text("*\n")  # never committed, whatever the top .gitignore says
    python = VENV / "bin" / "python"
    if not (VENV / "bin" / "changedetection.py").exists():
        print(f"installing {PACKAGE} into {VENV} (once; takes minutes)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
        log = ROOT / "changedetection-install.log"
        with log.open("wb") as sink:
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", PACKAGE],
                check=True, stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
    return python


def version(python: Path) -> str:
    shown = subprocess.run(
        [str(python), "-m", "pip", "show", PACKAGE], capture_output=True, text=True, check=True
    ).stdout
    return next(line.split()[1] for line in shown.splitlines() if line.startswith("Version:"))


class ChangeDetection:
    """One changedetection.io server with its own datastore, watching the given URLs."""

    def __init__(self, python: Path) -> None:
        self.datastore = Path(tempfile.mkdtemp(prefix="cdio-bench-"))
        self.port = _pages.free_port()
        self.log = (ROOT / "changedetection-server.log").open("wb")
        self.process = subprocess.Popen(
            [str(python), str(python.parent / "changedetection.py"), "-d", str(self.datastore),
             "-p", str(self.port), "-h", "127.0.0.1", "-P", "true"],
            env={**os.environ, "ALLOW_IANA_RESTRICTED_ADDRESSES": "true"},  # loopback pages
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.key = self._wait_up()
        self.index: dict[str, int] = {}  # watch uuid -> page number

    def watch(self, urls: list[str]) -> None:
        """Replace the example watches of a new datastore with one watch per URL."""
        for uuid in self._list():
            self._call("DELETE", f"/api/v1/watch/{uuid}")
        self._call("POST", "/api/v1/import", "\n".join(urls).encode(), "text/plain")
        deadline = time.monotonic() + 120
        while len(listed := self._list_settled()) < len(urls):
            if time.monotonic() > deadline:
                raise RuntimeError(f"changedetection.io imported {len(listed)}/{len(urls)}")
            time.sleep(0.2)
        page = {url: index for index, url in enumerate(urls)}
        self.index = {uuid: page[watch["url"]] for uuid, watch in listed.items()}

    def cycle(self, meter: _procs.Meter | None = None) -> tuple[float, set[int]]:
        """(wall seconds, pages reported changed) of one check of every watch; `meter` runs
        during the check only."""
        before = {uuid: watch["last_changed"] for uuid, watch in self._list().items()}
        if meter is not None:
            meter.start()
        started = time.perf_counter()
        since = int(time.time())
        self._call("GET", "/api/v1/watch?recheck_all=1")
        while not self._finished(since):
            time.sleep(0.1)
        wall = time.perf_counter() - started
        if meter is not None:
            meter.stop()
        after = self._list()
        changed = {self.index[u] for u, w in after.items() if w["last_changed"] != before[u]}
        return wall, changed

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()
        shutil.rmtree(self.datastore, ignore_errors=True)

    def _finished(self, since: int) -> bool:
        """Queue and running checks empty (cheap), then every watch checked since `since`:
        right after the trigger the queue is still empty while it is being filled."""
        queue = self._call("GET", "/queue.json")
        if queue["queued_count"] or queue["running_count"]:
            return False
        return all(watch["last_checked"] >= since for watch in self._list().values())

    def _list_settled(self) -> dict[str, Any]:
        """The watch list while an import is still adding to it (listing can then fail)."""
        try:
            return self._list()
        except urllib.error.HTTPError as exc:
            if exc.code != 500:
                raise
            return {}

    def _list(self) -> dict[str, Any]:
        listed: dict[str, Any] = self._call("GET", "/api/v1/watch")
        return listed

    def _call(
        self, method: str, path: str, body: bytes | None = None, kind: str = "application/json"
    ) -> Any:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=body, method=method,
            headers={"x-api-key": self.key, "content-type": kind},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw.strip() else None

    def _wait_up(self) -> str:
        """The API key (written to the datastore at start), once the server answers."""
        store = self.datastore / "changedetection.json"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"changedetection.io exited; see {self.log.name}")
            try:
                key = json.loads(store.read_text())["settings"]["application"]["api_access_token"]
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/queue.json", timeout=2):
                    return str(key)
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        raise RuntimeError("changedetection.io did not start in 120 s")
