"""start_watch / stop_watch / refresh_watch bound to the chat of the turn (no ids for the model)."""

from __future__ import annotations

import dataclasses
from typing import Any

from lookout.agent.context import TurnContext
from lookout.chat import parts
from lookout.db import repo
from lookout.watches import service


@dataclasses.dataclass(frozen=True)
class ChatWatchTools:
    ctx: TurnContext

    async def _chat(self) -> repo.Chat:
        chat = await repo.get_chat(
            self.ctx.services.db,
            chat_id=self.ctx.chat_id,
            workspace_id=self.ctx.principal.workspace_id,
        )
        assert chat is not None
        return chat

    async def start(self, question: str, cadence: str) -> dict[str, Any]:
        automation = await service.create(
            self.ctx.services.db, self.ctx.services.settings, self.ctx.principal,
            chat=await self._chat(), message=question, cadence=cadence,
        )  # fmt: skip
        described = service.summary(automation)
        await self.ctx.emit(parts.data("watch", {"event": "started", **described}))
        return described

    async def stop(self) -> dict[str, Any] | None:
        found = await service.find_for_thread(
            self.ctx.services.db, self.ctx.principal.workspace_id, self.ctx.chat_id
        )
        if found is None:
            return None
        await service.stop(self.ctx.services.db, self.ctx.principal, found.id)
        await self.ctx.emit(parts.data("watch", {"event": "stopped", "id": str(found.id)}))
        return service.summary(found)

    async def refresh(self) -> dict[str, Any] | None:
        found = await service.find_for_thread(
            self.ctx.services.db, self.ctx.principal.workspace_id, self.ctx.chat_id
        )
        if found is None:
            return None
        run_id = await service.run_now(self.ctx.services.db, self.ctx.principal, found.id)
        await self.ctx.emit(
            parts.data("watch", {"event": "run", "id": str(found.id), "run_id": str(run_id)})
        )
        return service.summary(found)


def for_turn(ctx: TurnContext) -> ChatWatchTools | None:
    """Watch tools for interactive turns; a scheduled turn never starts or stops watches."""
    return None if ctx.scheduled else ChatWatchTools(ctx)
