"""The envelope every JSON answer of /v1, /api and MCP's structuredContent wears."""

from __future__ import annotations

from typing import Any

from lookout import errors


def meta(
    *,
    request_id: str,
    verb: str | None = None,
    credits_charged: int = 0,
    job_id: str | None = None,
    duration_ms: int | None = None,
) -> dict[str, Any]:
    return {
        "verb": verb,
        "request_id": request_id,
        "credits_charged": credits_charged,
        "job_id": job_id,
        "duration_ms": duration_ms,
    }


def success(data: Any, meta: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "data": data, "error": None, "meta": meta}


def failure(error: errors.LookoutError, meta: dict[str, Any]) -> dict[str, Any]:
    return {"ok": False, "data": None, "error": error.to_dict(), "meta": meta}
