"""The watch tools (start, stop, refresh, describe, pause / resume, edit) bound to the chat of the
turn: no ids for the model."""

from __future__ import annotations

import dataclasses
from typing import Any

from lookout import parts
from lookout.agent.context import TurnContext
from lookout.db import repo
from lookout.watches import controls, service, workspace


@dataclasses.dataclass(frozen=True)
class ChatWatchTools:
    ctx: TurnContext
    zone: str | None = None  # the viewer's browser's time zone, sent with the message

    async def _chat(self) -> repo.Chat:
        chat = await repo.get_chat(
            self.ctx.services.db,
            chat_id=self.ctx.chat_id,
            workspace_id=self.ctx.principal.workspace_id,
        )
        assert chat is not None
        return chat

    async def start(
        self, question: str, cadence: str, *, timezone: str = "UTC",
        condition: dict[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        timezone = await workspace.zone_for_new_watch(
            self.ctx.services.db, self.ctx.principal.workspace_id, question, timezone, self.zone
        )
        automation = await service.create(
            self.ctx.services.db, self.ctx.services.settings, self.ctx.principal,
            chat=await self._chat(), message=question, cadence=cadence, timezone=timezone,
            condition=condition, rendered=frozenset(self.ctx.rendered_urls),
        )  # fmt: skip
        described = await service.described(self.ctx.services.db, automation)
        await self.ctx.emit(parts.data("watch", {"event": "started", **described}))
        return described

    async def stop(self) -> dict[str, Any] | None:
        found = await self._found()  # a paused watch stops too
        if found is None:
            return None
        await service.stop(self.ctx.services.db, self.ctx.principal, found.id)
        await self.ctx.emit(parts.data("watch", {"event": "stopped", "id": str(found.id)}))
        return service.summary(found)

    async def refresh(self) -> dict[str, Any] | None:
        found = await self._found()
        if found is None or not found.enabled:  # a paused watch is not run (resume it first)
            return service.summary(found) if found is not None else None
        run_id = await service.run_now(self.ctx.services.db, self.ctx.principal, found.id)
        await self.ctx.emit(
            parts.data("watch", {"event": "run", "id": str(found.id), "run_id": str(run_id)})
        )
        return service.summary(found)

    async def _found(self) -> repo.Automation | None:
        return await controls.find(self.ctx.services.db, self.ctx.principal, self.ctx.chat_id)

    async def describe(self) -> str | None:
        found = await self._found()
        return controls.description(found, self.zone) if found is not None else None

    async def set_enabled(self, enabled: bool) -> dict[str, Any] | None:
        found = await self._found()
        if found is None:
            return None
        services = self.ctx.services
        updated = await controls.set_enabled(
            services.db, services.settings, self.ctx.principal, found.id, enabled
        )
        described = await service.described(services.db, updated)
        event = "resumed" if enabled else "paused"
        await self.ctx.emit(parts.data("watch", {"event": event, **described}))
        return described

    async def edit(self, changes: dict[str, Any]) -> dict[str, Any] | None:
        found = await self._found()
        if found is None:
            return None
        services = self.ctx.services
        updated = await controls.edit(
            services.db, services.settings, self.ctx.principal, found.id, changes
        )
        described = await service.described(services.db, updated)
        await self.ctx.emit(parts.data("watch", {"event": "edited", **described}))
        return described


def for_turn(ctx: TurnContext, zone: str | None = None) -> ChatWatchTools | None:
    """Watch tools for interactive turns; a scheduled turn never starts or stops watches.
    `zone`: the time zone of the viewer's browser (new watches run in it unless told another)."""
    return None if ctx.scheduled else ChatWatchTools(ctx, zone)
