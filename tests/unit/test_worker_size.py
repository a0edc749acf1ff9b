"""`lookout worker` sized to the machine unless told: a process per core, 8 messages a core."""

from __future__ import annotations

import pytest

from lookout import cli
from lookout.settings import Settings

REQUIRED = {"DATABASE_URL": "postgresql://x/y", "REDIS_URL": "redis://x", "LOOKOUT_SECRET_KEY": "k",
            "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:8000"}  # fmt: skip


@pytest.mark.parametrize(
    ("env", "cores", "size"),
    [
        ({}, 1, (1, 8)),
        ({}, 4, (4, 8)),
        ({"LOOKOUT_WORKER_PROCESSES": "1"}, 2, (1, 10)),  # `lookout dev`: capped by the pool
        ({"LOOKOUT_WORKER_PROCESSES": "1", "LOOKOUT_DB_POOL_MAX": "40"}, 4, (1, 32)),
        ({"LOOKOUT_WORKER_PROCESSES": "3", "LOOKOUT_WORKER_THREADS": "2"}, 16, (3, 2)),
    ],
)
def test_worker_size(env: dict[str, str], cores: int, size: tuple[int, int]) -> None:
    assert cli.worker_size(Settings.from_env({**REQUIRED, **env}), cores) == size


def test_the_machine_has_a_core() -> None:
    assert cli.machine_cores() >= 1
