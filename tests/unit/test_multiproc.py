"""The shared metrics directory: dead processes' live gauges go, a race over them is harmless."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout.ops import multiproc

DEAD = 2**22 + 12345  # above the default pid_max: no such process


def test_dead_processes_live_gauges_go_and_the_rest_stays(tmp_path: Path) -> None:
    dead = tmp_path / f"gauge_livesum_{DEAD}.db"
    mine = tmp_path / f"gauge_livesum_{os.getpid()}.db"
    counter = tmp_path / f"counter_{DEAD}.db"
    for file in (dead, mine, counter):
        file.write_bytes(b"x")

    multiproc._forget_dead(tmp_path)

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, counter.name])


def test_a_gauge_another_process_removed_first_is_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a dead process's gauge that a second process starting at the same moment removes
    # between our listing and our removal (two schedulers started together hit this)
    gauge = tmp_path / f"gauge_livemax_{DEAD}.db"
    gauge.write_bytes(b"x")

    def raced(pid: int) -> bool:
        gauge.unlink()
        return False

    monkeypatch.setattr(multiproc, "_alive", raced)

    # When this process cleans up, Then it does not fail
    multiproc._forget_dead(tmp_path)
    assert list(tmp_path.iterdir()) == []
