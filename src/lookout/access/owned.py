"""One pattern for what a workspace keeps by name (its MCP connectors, its notification targets):
list and get (any member), create under a cap and a unique name, delete (editors and owners),
every query scoped to the principal's workspace, so another workspace's object is not_found;
secrets sealed to the row they belong to. A kind differs only in its rows, its repo functions
and its words, given as data (`Owned`); mcp/connectors.py and notify/targets.py add what is
theirs (a connector's tools, a target's channel and default)."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Generic, TypeVar

from lookout import errors
from lookout.access import secrets
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.db import repo

Row = TypeVar("Row")


@dataclasses.dataclass(frozen=True)
class Owned(Generic[Row]):
    """A kind of per-workspace object: its repo functions and what a person reads about it."""

    missing: str  # NotFound's message: "No such MCP connector in this workspace."
    full: str  # Conflict's message when the workspace has `most` of them already
    taken: str  # Conflict's message for a taken name, formatted with `name`
    most: int
    list_rows: Callable[[repo.Executor, uuid.UUID], Awaitable[list[Row]]]
    get_row: Callable[[repo.Executor, uuid.UUID, uuid.UUID], Awaitable[Row | None]]
    delete_row: Callable[[repo.Executor, uuid.UUID, uuid.UUID], Awaitable[bool]]
    count_rows: Callable[[repo.Executor, uuid.UUID], Awaitable[int]] | None = None
    # What else goes when one is deleted (a connector's cached tool list).
    after_delete: Callable[[Services, uuid.UUID], Awaitable[None]] | None = None

    def not_found(self) -> errors.NotFound:
        return errors.NotFound(self.missing)

    async def list_all(self, services: Services, principal: Principal) -> list[Row]:
        return await self.list_rows(services.db, principal.workspace_id)

    async def get(self, services: Services, principal: Principal, object_id: uuid.UUID) -> Row:
        found = await self.get_row(services.db, principal.workspace_id, object_id)
        if found is None:
            raise self.not_found()
        return found

    async def delete(self, services: Services, principal: Principal, object_id: uuid.UUID) -> None:
        principal.require("editor")
        if not await self.delete_row(services.db, principal.workspace_id, object_id):
            raise self.not_found()
        if self.after_delete is not None:
            await self.after_delete(services, object_id)

    async def check_room(self, services: Services, principal: Principal) -> None:
        """Conflict when the workspace already has as many as it may."""
        if self.count_rows is not None:
            count = await self.count_rows(services.db, principal.workspace_id)
        else:
            count = len(await self.list_rows(services.db, principal.workspace_id))
        if count >= self.most:
            raise errors.Conflict(self.full)

    @contextlib.contextmanager
    def named(self, name: str) -> Iterator[None]:
        """Around an insert: a taken name is a Conflict that says which name."""
        try:
            yield
        except errors.Conflict:
            raise errors.Conflict(self.taken.format(name=name)) from None


def seal(services: Services, purpose: str, object_id: uuid.UUID, plain: bytes) -> bytes:
    """`plain` sealed to the row `object_id` (its id is the context: it opens on no other row)."""
    return secrets.seal(services.settings.secret_key, purpose, plain, context=object_id.bytes)


def unseal(services: Services, purpose: str, object_id: uuid.UUID, sealed: bytes) -> bytes:
    """What seal() sealed for `object_id`; Conflict when it no longer opens (key changed)."""
    return secrets.unseal(services.settings.secret_key, purpose, sealed, context=object_id.bytes)
