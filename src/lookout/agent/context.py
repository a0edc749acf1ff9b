"""What a turn's graph run may use: services, who asks, the chat, a way to emit parts."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from lookout import parts
from lookout.access import credits
from lookout.access.principals import Principal
from lookout.access.services import Services

Emit = Callable[[parts.Part], Awaitable[None]]


class WatchTools(Protocol):
    """start / stop / refresh / describe / pause / resume / edit the current chat's watch."""

    async def start(
        self, question: str, cadence: str, *, timezone: str = "UTC",
        condition: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...  # fmt: skip

    async def stop(self) -> dict[str, Any] | None: ...

    async def refresh(self) -> dict[str, Any] | None: ...

    async def describe(self) -> str | None: ...

    async def set_enabled(self, enabled: bool) -> dict[str, Any] | None: ...

    async def edit(self, changes: dict[str, Any]) -> dict[str, Any] | None: ...


@dataclasses.dataclass(frozen=True)
class TurnContext:
    services: Services
    principal: Principal
    chat_id: uuid.UUID
    turn_id: uuid.UUID
    source: str  # "user", "api" or "automation"
    emit: Emit
    now: dt.datetime
    watches: WatchTools | None = None  # None: watching is unavailable (or a scheduled turn)
    # A scheduled turn's watch: its condition (None: report any change), from the automation.
    condition: dict[str, Any] | None = None
    job_deadline_s: float = 300.0
    question: str = ""  # the message this turn answers (ranks what a model reads of a page)
    # The turn's verb calls' settles, written with the turn's answer (turns.execute).
    settlements: list[credits.Settlement] = dataclasses.field(default_factory=list)
    # What this turn's looks at watched sources found (agent.looks): a run's data, its parts.
    diffs: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # The pages this turn's looks read ({url, title, markdown}): a run keeps them as its history.
    pages_read: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # The pages this turn's looks know need a browser (now or on an earlier look): a watch
    # started in this turn prices them as rendered pages (watches.service.estimate_credits).
    rendered_urls: set[str] = dataclasses.field(default_factory=set)

    @property
    def scheduled(self) -> bool:
        return self.source == "automation"
