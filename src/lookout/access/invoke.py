"""The one adapter: every door (REST, MCP, chat) runs a verb through `invoke`.

parse → validate → authz → rate limit → reserve credits → execute (inline or as a job)
→ validate/serialize output → settle credits → Outcome (the door turns it into an envelope).

The credits of a call are keyed in the ledger by a call id made here, for that call only: a
door's request id comes from the client (X-Request-Id) and only correlates logs. A reserve that
took nothing raises (credits.reserve), so nothing runs unpaid.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from lookout.access import credits, envelope, jobs, keys, metering, ratelimit
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.capabilities import registry
from lookout.db import repo
from lookout.ops import instrument

Progress = Callable[[int, int], Awaitable[None]]
# An inline call holds its reservation this long before the sweeper may refund it.
INLINE_HOLD_S = 900.0


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a verb call produced: 200 with data, or 202 with a job still running."""

    verb: str
    request_id: str
    data: dict[str, Any] | None
    call_id: str | None = None
    status: int = 200
    credits_charged: int = 0
    job_id: str | None = None
    started: float = dataclasses.field(default_factory=time.monotonic)
    headers: dict[str, str] = dataclasses.field(default_factory=dict)

    def envelope(self) -> dict[str, Any]:
        meta = envelope.meta(
            request_id=self.request_id,
            call_id=self.call_id,
            verb=self.verb,
            credits_charged=self.credits_charged,
            job_id=self.job_id,
            duration_ms=int((time.monotonic() - self.started) * 1000),
        )
        return envelope.success(self.data, meta)


def new_call_id() -> str:
    """The ledger key of one verb call: never chosen by a client, never reused."""
    return f"call_{uuid.uuid4().hex}"


async def _noop_progress(done: int, total: int) -> None:
    return None


async def rate_limit(services: Services, principal: Principal) -> ratelimit.Decision | None:
    """Per API key (its own limit or the default), per user for sessions; none for the system.

    An API key is also checked for revocation in the same round trip (its principal may come
    from a cache, see `auth.key_principal`).
    """
    if principal.kind == "system":
        return None
    marker = None
    if principal.kind == "api_key":
        assert principal.key_id is not None
        subject, marker = f"key:{principal.key_id}", keys.revoked_marker(principal.key_id)
    elif principal.kind == "oauth":  # a connected agent is limited like a key of its own
        subject = f"grant:{principal.grant_id}"
    else:
        subject = f"user:{principal.user_id}"
    limit = principal.rate_limit_per_minute or services.settings.rate_limit_per_minute
    return await ratelimit.enforce(
        services.redis, subject=subject, limit=limit, revoked_marker=marker
    )


@instrument.verb_call
async def invoke(
    services: Services,
    verb_name: str,
    raw_input: object,
    principal: Principal,
    door: str,
    *,
    request_id: str,
    run_async: bool = False,
    progress: Progress | None = None,
    settlements: list[credits.Settlement] | None = None,
) -> Outcome:
    """Run one verb call for `principal`; raises LookoutError for every refusal or failure.

    With `settlements`, an inline call's settle is appended there for the caller to write with
    its own closing statement (a chat turn's, see turns.execute) instead of in a transaction of
    its own; one never written (the caller died) is refunded by the stale-reservation sweeper.
    """
    started = time.monotonic()
    verb = registry.get(verb_name)
    data = registry.validate_input(verb, raw_input)
    principal.require("editor")
    decision = await rate_limit(services, principal)
    headers = decision.headers() if decision else {}
    price = verb.max_units(data) * verb.price
    call_id = new_call_id()
    if run_async or verb.is_slow(data):
        job = await jobs.submit(
            services, verb, raw_input, principal, door, call_id=call_id, price=price
        )
        finished = await jobs.wait(services, job, services.settings.job_wait_s)
        return _job_outcome(finished, request_id=request_id, started=started, headers=headers)
    try:
        charged, output = await _run_inline(
            services, verb, data, principal, call_id, price, progress, settlements
        )
    except registry.NeedsWorker as need:  # refunded by _run_inline; a fresh call id for the job
        # Priced for the pages already found to need the browser (see access.metering).
        price += need.extra_units * verb.price
        job = await jobs.submit(
            services, verb, raw_input, principal, door, call_id=new_call_id(), price=price
        )
        finished = await jobs.wait(services, job, services.settings.job_wait_s)
        return _job_outcome(finished, request_id=request_id, started=started, headers=headers)
    return Outcome(
        verb=verb.name,
        request_id=request_id,
        call_id=call_id,
        data=output,
        credits_charged=charged,
        started=started,
        headers=headers,
    )


def _job_outcome(
    job: repo.Job, *, request_id: str, started: float, headers: dict[str, str]
) -> Outcome:
    """200 with the result, 202 while it runs, or the job's own error."""
    common: dict[str, Any] = {
        "verb": job.verb, "request_id": request_id, "call_id": job.request_id,
        "job_id": str(job.id), "started": started,
    }  # fmt: skip
    if job.status == "succeeded":
        return Outcome(
            data=job.result, credits_charged=job.credits_charged, headers=headers, **common
        )
    if job.finished:
        raise jobs.job_error(job)
    headers = {**headers, "Location": f"/v1/jobs/{job.id}"}
    return Outcome(data=jobs.view(job), status=202, headers=headers, **common)


async def _run_inline(
    services: Services,
    verb: registry.Verb,
    data: dict[str, Any],
    principal: Principal,
    call_id: str,
    price: int,
    progress: Progress | None,
    settlements: list[credits.Settlement] | None,
) -> tuple[int, dict[str, Any]]:
    workspace_id = principal.workspace_id
    await credits.reserve(
        services.db,
        workspace_id=workspace_id,
        request_id=call_id,
        amount=price,
        verb=verb.name,
        actor=principal.actor,
        hold_s=INLINE_HOLD_S,
        key_id=principal.key_id,
    )
    meter = metering.Meter(
        services.db, workspace_id, call_id, verb.name, verb.price, principal.actor,
        INLINE_HOLD_S, reserved=price, key_id=principal.key_id,
    )  # fmt: skip
    context = registry.VerbContext(
        http=services.http,
        settings=services.settings,
        progress=progress or _noop_progress,
        redis=services.redis,
        browser=services.browser,
        top_up=meter.top_up,
    )
    try:
        output = registry.dump_output(verb, await verb.execute(data, context))
    except BaseException:
        await meter.refund()
        raise
    units = verb.billable_units(output)
    if settlements is not None:
        parts = meter.split(units * verb.price)  # what the deferred settles will charge
        settlements.extend(parts)
        return sum(part.charged for part in parts), output
    return await meter.settle(units * verb.price), output
