from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest
import uvloop

from lookout import loops
from lookout.errors import ConfigError
from lookout.settings import Settings


@pytest.fixture(autouse=True)
def restore_policy() -> Iterator[None]:
    policy = asyncio.get_event_loop_policy()
    yield
    asyncio.set_event_loop_policy(policy)


def settings(event_loop: str | None = None) -> Settings:
    env = {
        "DATABASE_URL": "postgresql://x/y",
        "REDIS_URL": "redis://x",
        "LOOKOUT_SECRET_KEY": "k",
        "LOOKOUT_PUBLIC_URL": "https://lookout.example",
    }
    chosen = {"LOOKOUT_EVENT_LOOP": event_loop} if event_loop else {}
    return Settings.from_env({**env, **chosen})


def test_uvloop_by_default_and_the_standard_loop_when_asked() -> None:
    assert settings().event_loop == "uvloop"

    loops.install(settings("uvloop"))
    loop = asyncio.new_event_loop()
    assert isinstance(loop, uvloop.Loop)
    loop.close()

    asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
    loops.install(settings("asyncio"))
    loop = asyncio.new_event_loop()
    assert not isinstance(loop, uvloop.Loop)
    loop.close()


def test_an_unknown_loop_is_a_configuration_error_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="LOOKOUT_EVENT_LOOP"):
        loops.install(settings("trio"))


def test_a_frozen_heap_is_out_of_the_collectors_reach_and_new_objects_are_not() -> None:
    tracked = len(gc.get_objects())
    try:
        loops.freeze_heap()
        # What was alive is frozen: a full collection no longer walks it
        assert gc.get_freeze_count() >= tracked // 2
        assert len(gc.get_objects()) < tracked // 10
        # And garbage made afterwards is still collected
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()


def test_a_held_collector_collects_nothing_until_the_heap_is_frozen() -> None:
    assert gc.isenabled()
    try:
        loops.hold_collector()
        cycles = []
        for _ in range(3 * gc.get_threshold()[0]):  # past the threshold of a young collection
            cycle: list[object] = []
            cycle.append(cycle)
            cycles.append(cycle)
        del cycles, cycle
        assert gc.get_count()[0] >= 3 * gc.get_threshold()[0]  # no collection ran
        loops.freeze_heap()
        assert gc.isenabled()  # it runs again once the process is open
        assert gc.get_count()[0] < gc.get_threshold()[0]
    finally:
        gc.enable()
        gc.unfreeze()
