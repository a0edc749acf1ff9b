"""Logging, configured once from a dict: readable text in development, JSON lines in production.

Every line carries the ids of what it is about (request, turn, run, job, chat, workspace):
`bound(...)` puts them in a context variable for the block, `ContextFilter` copies them onto each
record. Formatters redact credentials as a last line of defence (code never logs them on purpose).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import logging.config
import re
import types
from collections.abc import Iterator, Mapping
from typing import Any

CONTEXT_KEYS = ("request_id", "turn_id", "run_id", "job_id", "chat_id", "workspace_id")
_EMPTY: Mapping[str, str] = types.MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "lookout_log_context", default=_EMPTY
)

_SECRET_KEYS = r"(?:password|passwd|secret|secret_key|token|api_key|apikey)"
# What a credential looks like when it slips into a message or a traceback.
_REDACTIONS = (
    (re.compile(r"\blk_[A-Za-z0-9_\-]{6,}"), "lk_***"),
    (re.compile(r"\b(lk[or]_)[A-Za-z0-9_\-]{6,}"), r"\1***"),  # OAuth access / refresh tokens
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}"), r"\1 ***"),
    (re.compile(r"(?i)(lookout_session=)[^;\s\"']+"), r"\1***"),
    (re.compile(rf"(?i)(\b{_SECRET_KEYS}[\"']?\s*[:=]\s*)([\"'])(?:(?!\2).)*\2"), r"\1\2***\2"),
    (re.compile(rf"(?i)(\b{_SECRET_KEYS}\s*=\s*)[^\s\"'&;,]+"), r"\1***"),
    # From a scheme's first character only (a "\b" tried every "." of "a.a.a..." anew: 3 s for
    # 32 KB of it in one message), each run consumed once.
    (re.compile(r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*+://[^:/@\s]*+):[^@/\s]++@"), r"\1:***@"),
)


# A substring every redaction needs (in lower case): most lines have none and skip the
# substitutions. Plain `in` tests on the lowered line: the one case-insensitive alternation
# regex they replace took 18 us a line, as long as formatting the rest of it.
_MAYBE_SECRET = (
    "lk_", "bearer", "basic", "lookout_session", "passw", "secret", "token", "apikey", "api_key",
    "://", "lko_", "lkr_",
)  # fmt: skip


def redact(text: str) -> str:
    """`text` with API keys, bearer tokens, session cookies, passwords and URL passwords masked."""
    lowered = text.lower()
    if not any(word in lowered for word in _MAYBE_SECRET):
        return text
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


def current() -> dict[str, str]:
    """The ids bound in this context."""
    return dict(_context.get())


@contextlib.contextmanager
def bound(**ids: object) -> Iterator[None]:
    """Attach ids (None values are skipped) to every log line inside the block."""
    extra = {key: str(value) for key, value in ids.items() if value is not None}
    token = _context.set({**_context.get(), **extra})
    try:
        yield
    finally:
        _context.reset(token)


def bind(**ids: object) -> None:
    """Attach ids for the rest of this context (a worker message, a task); prefer `bound`."""
    extra = {key: str(value) for key, value in ids.items() if value is not None}
    _context.set({**_context.get(), **extra})


def clear() -> None:
    _context.set(_EMPTY)


class ContextFilter(logging.Filter):
    """Copy the bound ids onto each record (an explicit `extra=` wins)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


def _ids(record: logging.LogRecord) -> dict[str, str]:
    return {key: str(getattr(record, key)) for key in CONTEXT_KEYS if hasattr(record, key)}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
            "pid": record.process,
        }
        line.update(_ids(record))
        if record.exc_info:
            line["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(line)


class TextFormatter(logging.Formatter):
    """One readable line: time, level, logger, message, then the ids in brackets."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ids = " ".join(f"{key}={value}" for key, value in _ids(record).items())
        if ids:
            head, sep, tail = text.partition("\n")
            text = f"{head} [{ids}]{sep}{tail}"
        return redact(text)


def configure(log_format: str = "text", level: str = "INFO") -> None:
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    logging.config.dictConfig(
        {
            "version": 1,
            "disable_existing_loggers": False,
            "filters": {"context": {"()": ContextFilter}},
            "formatters": {"main": {"()": formatter}},
            "handlers": {
                "stderr": {
                    "class": "logging.StreamHandler",
                    "formatter": "main",
                    "filters": ["context"],
                }
            },
            "root": {"handlers": ["stderr"], "level": level.upper()},
            "loggers": {"aiohttp.access": {"level": "WARNING"}},
        }
    )
