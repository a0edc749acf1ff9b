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
    call_id: str | None = None,
) -> dict[str, Any]:
    """`request_id` correlates logs (a client's X-Request-Id, or ours); `call_id` is the
    server-made key of a verb call's credits in the ledger (GET /v1/usage lists it)."""
    return {
        "verb": verb,
        "request_id": request_id,
        "call_id": call_id,
        "credits_charged": credits_charged,
        "job_id": job_id,
        "duration_ms": duration_ms,
    }


def success(data: Any, meta: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "data": data, "error": None, "meta": meta}


def failure(error: errors.LookoutError, meta: dict[str, Any]) -> dict[str, Any]:
    return {"ok": False, "data": None, "error": error.to_dict(), "meta": meta}
