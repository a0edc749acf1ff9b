"""Logging, configured once from a dict: readable text in development, JSON lines in production."""

from __future__ import annotations

import json
import logging
import logging.config
from typing import Any

_CONTEXT_KEYS = ("request_id", "turn_id", "run_id", "job_id", "chat_id", "workspace_id")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in _CONTEXT_KEYS:
            if hasattr(record, key):
                line[key] = str(getattr(record, key))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


def configure(log_format: str = "text", level: str = "INFO") -> None:
    formatter = (
        {"()": JsonFormatter}
        if log_format == "json"
        else {"format": "%(asctime)s %(levelname)-7s %(name)s: %(message)s"}
    )
    logging.config.dictConfig(
        {
            "version": 1,
            "disable_existing_loggers": False,
            "formatters": {"main": formatter},
            "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "main"}},
            "root": {"handlers": ["stderr"], "level": level},
            "loggers": {"aiohttp.access": {"level": "WARNING"}},
        }
    )
