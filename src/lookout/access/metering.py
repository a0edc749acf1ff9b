"""A verb call's credits past its first reservation: top-ups made while it runs, and the settle
that closes them all.

A call reserves its worst case as far as it can be known before running (credits.reserve). Some
costs are only known while it runs: a web.scrape page under `render: "auto"` is a plain page
(1 unit) until its HTML turns out to be a JavaScript shell, and then it is a rendered one
(rendering.RENDERED_UNITS). Before such a page renders, the executor asks for the difference
(`VerbContext.top_up`); the Meter takes it from credits the call reserved beyond its base price
(a job priced for the pages the web process already found to be shells), else reserves it under
a ledger key of its own (`<call id>:topup:<attempt>.<n>`, same verb and actor, same hold, so the
stale-reservation sweeper returns it if the process dies). When the balance cannot cover it,
`top_up` raises InsufficientCredits and nothing is taken: that page is not rendered.

At the end the call's charge (its billable units) is spread over the first reservation, then the
top-ups in order, each settled (or refunded) once: the balance ends exactly `charge` lower.
"""

from __future__ import annotations

import dataclasses
import uuid

import asyncpg

from lookout import errors
from lookout.access import credits

TOPUP_MARK = ":topup:"  # what tells a top-up's ledger key from a call's (queries.sql usage_by_verb)


@dataclasses.dataclass
class Meter:
    db: asyncpg.Pool
    workspace_id: uuid.UUID
    call_id: str
    verb: str
    unit_price: int
    actor: str
    hold_s: float
    reserved: int  # what the call's first reservation took
    spare: int = 0  # of it, credits beyond the base price, for costs found while running
    key_id: uuid.UUID | None = None
    attempt: int = 1
    topups: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    _made: int = 0

    async def top_up(self, units: int) -> None:
        """Reserve `units` more billable units for this call, or raise InsufficientCredits."""
        amount = units * self.unit_price
        taken = min(self.spare, amount)
        self.spare -= taken
        if amount == taken:
            return
        self._made += 1  # before any await: concurrent pages never share a key
        key = f"{self.call_id}{TOPUP_MARK}{self.attempt}.{self._made}"
        try:
            await credits.reserve(
                self.db, workspace_id=self.workspace_id, request_id=key, amount=amount - taken,
                verb=self.verb, actor=self.actor, hold_s=self.hold_s, key_id=self.key_id,
            )  # fmt: skip
        except errors.InsufficientCredits as exc:
            self.spare += taken
            raise errors.InsufficientCredits(
                f"This page needs {units} more credit(s) than reserved (it needs a browser to "
                f"render) and this workspace has {exc.details.get('balance')}; it was not "
                "rendered. Ask the workspace owner to add credits.",
                balance=exc.details.get("balance"),
                price=amount - taken,
            ) from None
        self.topups.append((key, amount - taken))

    def split(self, charged: int) -> list[credits.Settlement]:
        """`charged` spread over the first reservation then the top-ups (each capped at what
        it reserved); one Settlement per ledger key."""
        first = min(charged, self.reserved)
        rest = charged - first
        parts = [credits.Settlement(self.workspace_id, self.call_id, first)]
        for key, amount in self.topups:
            take = min(rest, amount)
            rest -= take
            parts.append(credits.Settlement(self.workspace_id, key, take))
        return parts

    async def settle(self, charged: int) -> int:
        """Close every reservation of the call, charging `charged` in all; the final charge."""
        total = await credits.settle(
            self.db, workspace_id=self.workspace_id, request_id=self.call_id,
            reserved=self.reserved, charged=min(charged, self.reserved),
        )  # fmt: skip
        for part, (key, amount) in zip(self.split(charged)[1:], self.topups, strict=True):
            total += await credits.settle(
                self.db, workspace_id=self.workspace_id, request_id=key, reserved=amount,
                charged=part.charged,
            )  # fmt: skip
        return total

    async def refund(self) -> None:
        """Return everything the call reserved (a failure is free)."""
        for key in [self.call_id, *(key for key, _ in self.topups)]:
            await credits.refund(self.db, workspace_id=self.workspace_id, request_id=key)
