"""`tools/call`: a tool runs its verb through the one adapter; every failure becomes an `isError`
result whose text says what to do, so the calling model can correct itself."""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lookout import errors
from lookout.access import invoke, jobs
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.mcp import bounds, tools
from lookout.settings import Settings

if TYPE_CHECKING:  # mcp loads when an MCP call is made, not in every worker
    import mcp.types as mcp_types

logger = logging.getLogger(__name__)

META_KEY = "lookout/meta"
_NARROWER = "For less at once, narrow the call (fewer URLs, a lower max_chars or limit)."
# Codes whose message alone does not say what to do next.
_HINTS = {
    "fetch_failed": "Check the URL, or try again later if the site was down.",
    "upstream_error": "This is usually temporary; try again in a minute.",
    "unavailable": "Lookout is briefly unavailable; try again in a few seconds.",
    "not_found": "Check the id; job results expire after a while.",
}


class UnknownTool(LookupError):
    """No tool has this name (a protocol error, not a tool result)."""


async def call(
    services: Services,
    principal: Principal,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    request_id: str,
) -> mcp_types.CallToolResult:
    """Run tool `name` for `principal`; UnknownTool when there is no such tool."""
    verb = tools.verb_for(name)
    if verb is None and name != tools.JOBS_GET:
        raise UnknownTool(name)
    try:
        if verb is None:
            return await _jobs_get(services, principal, arguments or {})
        outcome = await invoke.invoke(
            services, verb.name, arguments or {}, principal, "mcp", request_id=request_id
        )
    except errors.LookoutError as exc:
        return failure(exc, request_id=request_id)
    except Exception:
        logger.exception("MCP tool %s failed", name, extra={"request_id": request_id})
        return failure(errors.LookoutError("Something went wrong on our side."), request_id)
    return _from_outcome(outcome, services.settings)


def _from_outcome(outcome: invoke.Outcome, settings: Settings) -> mcp_types.CallToolResult:
    import mcp.types as mcp_types

    meta = outcome.envelope()["meta"]
    data = outcome.data or {}
    structured = data
    if outcome.status == 202:
        text = (
            f"This call is running as job {outcome.job_id} (status {data.get('status')}). "
            f'Call {tools.JOBS_GET} with {{"job_id": "{outcome.job_id}"}} to get the result; '
            '"wait_seconds" waits for it.'
        )
    else:
        structured, cut = _bound(data, settings, outcome.job_id, rest=f"/v1/{outcome.verb}")
        text = bounded(_json(data), settings.mcp_text_limit, _rest_hint(outcome.job_id, cut))
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)],
        structured_content=structured,
        _meta={META_KEY: meta},
    )


def _bound(
    data: dict[str, Any], settings: Settings, job_id: str | None, *, rest: str
) -> tuple[dict[str, Any], bool]:
    """structuredContent within LOOKOUT_MCP_STRUCTURED_LIMIT, saying how to get the rest."""
    if job_id:
        whole = f"GET /v1/jobs/{job_id} (REST API, with an API key) returns it whole."
    else:
        whole = f"POST {rest.replace('.', '/')} (REST API, with an API key) returns it whole."
    return bounds.bound(data, settings.mcp_structured_limit, f"{_NARROWER} {whole}")


async def _jobs_get(
    services: Services, principal: Principal, arguments: dict[str, Any]
) -> mcp_types.CallToolResult:
    import mcp.types as mcp_types

    job_id, wait_s = _jobs_get_input(arguments)
    job = await jobs.get(services, job_id=job_id, workspace_id=principal.workspace_id)
    if wait_s:
        job = await jobs.wait(services, job, float(wait_s))
    view = jobs.view(job)
    failed = job.finished and job.status != "succeeded"
    settings = services.settings
    structured, cut = _bound(view, settings, str(job.id), rest="")
    text = bounded(_json(view), settings.mcp_text_limit, _rest_hint(str(job.id), cut))
    if failed:
        text = f"The job {job.status}: {jobs.job_error(job).message}\n\n{text}"
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=failed,
    )


def _jobs_get_input(arguments: dict[str, Any]) -> tuple[uuid.UUID, int]:
    unknown = sorted(set(arguments) - {"job_id", "wait_seconds"})
    raw_id, wait_s = arguments.get("job_id"), arguments.get("wait_seconds", 0)
    problems: dict[str, list[str]] = {key: ["Unknown field."] for key in unknown}
    try:
        job_id = uuid.UUID(str(raw_id))
    except ValueError:
        problems["job_id"] = ["A job id (UUID) returned by an earlier call."]
    whole = isinstance(wait_s, int) and not isinstance(wait_s, bool)
    if not whole or not 0 <= wait_s <= tools.MAX_JOB_WAIT_S:
        problems["wait_seconds"] = ["An integer from 0 to 30."]
    if problems:
        raise errors.InvalidInput("The input of jobs_get is not valid.", fields=problems)
    return job_id, wait_s


def failure(error: errors.LookoutError, request_id: str) -> mcp_types.CallToolResult:
    """An isError result: what went wrong, and what to do about it."""
    import mcp.types as mcp_types

    lines = [error.message]
    if isinstance(error, errors.InvalidInput) and error.details.get("fields"):
        fields = _json(error.details["fields"])
        lines.append(f"Fix these arguments (the tool's inputSchema lists them all): {fields}")
    if error.code in _HINTS:
        lines.append(_HINTS[error.code])
    lines.append(f"(error code: {error.code}; request id: {request_id})")
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="\n".join(lines))],
        is_error=True,
        _meta={META_KEY: {"request_id": request_id, "error": error.to_dict()}},
    )


def bounded(text: str, limit: int, hint: str) -> str:
    """`text`, or its start plus a note saying how to get the rest, within `limit` characters."""
    if len(text) <= limit:
        return text
    note = f"\n\n[Cut at {limit:,} of {len(text):,} characters. {hint}]"
    return text[: max(0, limit - len(note))] + note


def _rest_hint(job_id: str | None, structured_cut: bool = False) -> str:
    if structured_cut:
        return (
            "structuredContent is shortened too (truncated: true); its truncation note says "
            f"how to get the rest. {_NARROWER}"
        )
    where = "The complete result is in structuredContent"
    if job_id:
        where += f", and {tools.JOBS_GET} with job_id {job_id} returns it again"
    return f"{where}. {_NARROWER}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
