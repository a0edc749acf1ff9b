"""Apprise's log records never reach a handler: they carry the URLs it posts to, tokens included.
A failed send's warnings are captured for the thread that sent (and masked by the caller)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

_local = threading.local()


class _Capture(logging.Filter):
    """On Apprise's logger: keep the sending thread's warnings, let no record through."""

    def filter(self, record: logging.LogRecord) -> bool:
        lines: list[str] | None = getattr(_local, "lines", None)
        if lines is not None and record.levelno >= logging.WARNING:
            lines.append(record.getMessage())
        return False


class _NotWhileSending(logging.Filter):
    """On urllib3's pool logger: its request lines name the path, which may be a token."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(_local, "lines", None) is None


def install() -> None:
    """Idempotent; a logger filter runs before every handler, pytest's caplog included."""
    apprise_logger = logging.getLogger("apprise")
    apprise_logger.setLevel(logging.WARNING)  # its debug records are not even built
    if not any(isinstance(f, _Capture) for f in apprise_logger.filters):
        apprise_logger.addFilter(_Capture())
    pool_logger = logging.getLogger("urllib3.connectionpool")
    if not any(isinstance(f, _NotWhileSending) for f in pool_logger.filters):
        pool_logger.addFilter(_NotWhileSending())


@contextlib.contextmanager
def capturing() -> Iterator[list[str]]:
    """The warnings Apprise logs in this thread inside the block."""
    _local.lines = []
    try:
        yield _local.lines
    finally:
        _local.lines = None
