"""The chat lease is released even when the database comes back only a little later."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from lookout import errors
from lookout.chat import lease
from lookout.db import repo


def flaky_release(failures: int) -> tuple[list[int], Any]:
    """A release_chat_lease that finds the database away `failures` times, then succeeds."""
    calls: list[int] = []

    async def release_chat_lease(
        db: Any, *, chat_id: uuid.UUID, token: uuid.UUID, **closing: Any
    ) -> bool:
        calls.append(1)
        if len(calls) <= failures:
            raise errors.Unavailable("The database is unavailable; retry in a few seconds.")
        return True

    return calls, release_chat_lease


async def test_a_release_during_an_outage_is_retried_until_the_database_is_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls, fake = flaky_release(failures=3)
    monkeypatch.setattr(repo, "release_chat_lease", fake)
    monkeypatch.setattr(lease, "RELEASE_RETRY_S", 0.01)

    await lease.release(None, uuid.uuid4(), uuid.uuid4())  # type: ignore[arg-type]

    assert len(calls) == 4


async def test_a_release_gives_up_once_the_lease_would_have_expired(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls, fake = flaky_release(failures=1000)
    monkeypatch.setattr(repo, "release_chat_lease", fake)
    monkeypatch.setattr(lease, "RELEASE_RETRY_S", 0.01)
    monkeypatch.setattr(lease, "LEASE_S", 0.1)

    with pytest.raises(errors.Unavailable):
        await lease.release(None, uuid.uuid4(), uuid.uuid4())  # type: ignore[arg-type]

    assert 2 <= len(calls) < 20
