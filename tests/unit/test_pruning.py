from __future__ import annotations

import uuid

import pytest

from lookout.agent import pruning


def test_every_inline_every_th_turn_of_a_thread_prunes_it() -> None:
    thread, other = uuid.uuid4(), uuid.uuid4()

    turns = [pruning.due(thread) for _ in range(3 * pruning.INLINE_EVERY)]
    assert not pruning.due(other)

    pruned_at = [number for number, due in enumerate(turns, start=1) if due]
    assert pruned_at == [pruning.INLINE_EVERY * k for k in (1, 2, 3)]


def test_the_turn_counts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pruning, "_MAX_TRACKED", 10)
    for _ in range(25):
        pruning.due(uuid.uuid4())

    assert len(pruning._turns) <= 10
