"""The reader processes: results and errors come back, a runaway or dead reader is replaced."""

from __future__ import annotations

import asyncio
import functools
import gc
import multiprocessing.forkserver
import os
import signal
import time
from collections.abc import Iterator

import pytest

from lookout.capabilities import content, readers
from lookout.settings import Settings
from tests.unit.test_settings import REQUIRED


class _Rebuilt(Exception):
    """Pickles, but cannot be rebuilt from its args (a common shape of library exceptions)."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(f"{code}: {detail}")


def _raise_unrebuildable() -> None:
    raise _Rebuilt(7, "odd")


def _raise_too_complex() -> None:
    raise content.TooComplex("the page nests elements more than 5000 deep")


def _pid() -> int:
    return os.getpid()


def _nap(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _spin(seconds: float) -> int:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return os.getpid()


@pytest.fixture
def pool() -> Iterator[readers.Pool]:
    # timeout_s counts a reader's start-up too: generous (a loaded machine)
    made = readers.Pool(2, timeout_s=10.0)
    yield made
    made.close()


async def test_a_call_runs_in_another_process_and_returns_its_result(pool: readers.Pool) -> None:
    assert await pool.run(functools.partial(sum, [1, 2, 3])) == 6
    assert await pool.run(_pid) != os.getpid()


async def test_calls_run_in_parallel_on_at_most_size_processes(pool: readers.Pool) -> None:
    pids = await asyncio.gather(*(pool.run(functools.partial(_nap, 0.5)) for _ in range(6)))
    assert len(set(pids)) == 2  # both readers worked, and no third was started
    await asyncio.gather(*(pool.run(functools.partial(_spin, 0.05)) for _ in range(4)))
    assert pool.cpu_s() >= 4 * 0.05  # the readers' own CPU time, as they report it


def _tracked() -> tuple[int, int]:
    gc.collect()
    return gc.get_freeze_count(), len(gc.get_objects())


async def test_what_a_reader_inherits_is_out_of_the_collector_s_sight(pool: readers.Pool) -> None:
    frozen, tracked = await pool.run(_tracked)

    # The forkserver's preloaded modules (trafilatura, bm25s, numpy: ~67,000 objects) are
    # frozen: a full collection no longer walks them (42 ms, readers.py).
    assert frozen > 10_000
    assert tracked < frozen / 2


def _niceness() -> int:
    return os.nice(0)


async def test_readers_run_at_a_lower_priority_than_their_parent(pool: readers.Pool) -> None:
    # Batch work: a call's round trips to Postgres and Redis and the event loop go first.
    assert readers.NICE == 10
    assert await pool.run(_niceness) == min(19, os.nice(0) + readers.NICE)
    level = readers.Pool(1, timeout_s=30.0, nice=0)  # LOOKOUT_READ_NICE=0
    try:
        assert await level.run(_niceness) == os.nice(0)
    finally:
        level.close()


async def test_the_readers_priority_is_a_setting() -> None:
    readers.close()  # this process's pool, if an earlier test made one
    made = readers.of(Settings.from_env({**REQUIRED, "LOOKOUT_READ_NICE": "3"}))
    try:
        assert made.nice == 3
        assert await made.run(_niceness) == min(19, os.nice(0) + 3)
    finally:
        readers.close()
    assert Settings.from_env(REQUIRED).read_nice == readers.NICE


async def test_the_readers_exception_comes_back_as_itself(pool: readers.Pool) -> None:
    with pytest.raises(content.TooComplex, match="nests elements more than 5000 deep"):
        await pool.run(_raise_too_complex)
    with pytest.raises(ValueError, match="invalid literal"):
        await pool.run(functools.partial(int, "x"))
    with pytest.raises(RuntimeError, match="_Rebuilt: 7: odd"):
        await pool.run(_raise_unrebuildable)
    assert await pool.run(functools.partial(sum, [1])) == 1  # the reader is still fine


async def test_a_runaway_call_is_stopped_and_its_reader_replaced(pool: readers.Pool) -> None:
    before = await pool.run(_pid)
    pool.timeout_s = 2.0  # short only once the reader is started (a loaded machine starts slowly)
    started = time.monotonic()
    with pytest.raises(readers.ReadTimeout, match="not read within 2 s"):
        await pool.run(functools.partial(time.sleep, 60))
    assert time.monotonic() - started < 10
    pool.timeout_s = 10.0  # the replacement's start-up is timed again
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)  # one call at a time: the sleeping call had the same reader
    after = await pool.run(_pid)
    assert after != before and len(pool._children) == 1  # a fresh one took its place
    assert await pool.run(functools.partial(sum, [2])) == 2


async def test_a_reader_that_dies_fails_its_call_alone(pool: readers.Pool) -> None:
    died, fine = await asyncio.gather(
        pool.run(functools.partial(os._exit, 3)),
        pool.run(functools.partial(sum, [4, 5])),
        return_exceptions=True,
    )
    assert isinstance(died, readers.ReadCrashed) and "(3)" in str(died)
    assert fine == 9
    assert await pool.run(functools.partial(sum, [1, 1])) == 2


async def test_a_reader_killed_while_idle_is_replaced_before_the_next_call(
    pool: readers.Pool,
) -> None:
    pid = await pool.run(_pid)
    os.kill(pid, signal.SIGKILL)
    await asyncio.sleep(0.2)
    assert await pool.run(functools.partial(sum, [3, 4])) == 7
    assert await pool.run(_pid) != pid


async def test_close_stops_every_reader_idle_or_busy() -> None:
    pool = readers.Pool(2, timeout_s=30.0)
    both = await asyncio.gather(*(pool.run(functools.partial(_spin, 0.05)) for _ in range(2)))
    busy = asyncio.ensure_future(pool.run(functools.partial(time.sleep, 30)))
    await asyncio.sleep(0.5)
    pids = {child.process.pid for child in pool._children}
    assert pids == set(both)  # one reader busy, one idle
    started = time.monotonic()
    await asyncio.to_thread(pool.close)
    with pytest.raises(readers.ReadCrashed):
        await busy
    assert time.monotonic() - started < 5
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(RuntimeError):  # a closed pool takes no more work
        await pool.run(_pid)


async def test_a_signal_to_the_process_group_leaves_the_readers_to_their_parent(
    pool: readers.Pool,
) -> None:
    pid = await pool.run(_pid)
    for sig in (signal.SIGINT, signal.SIGTERM):  # what a terminal or systemd sends everyone
        os.kill(pid, sig)
    await asyncio.sleep(0.2)
    assert await pool.run(_pid) == pid  # still there, still reading, until the pool closes


def test_no_process_starts_before_the_first_read() -> None:
    pool = readers.Pool(2)
    try:
        assert pool.cpu_s() == 0.0 and not pool._children
    finally:
        pool.close()


def test_the_default_size_is_one_per_core_within_the_fetch_concurrency() -> None:
    cores = len(os.sched_getaffinity(0))
    assert readers.default_size(8) == max(1, min(cores, 8))
    assert readers.default_size(1) == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _gone(pids: set[int], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_idle_readers_exit_with_the_forkserver_and_the_next_call_starts_them() -> None:
    # Given a pool whose readers may idle 0.5 s, both readers and the forkserver started
    pool = readers.Pool(2, timeout_s=30.0, idle_s=0.5)
    try:
        first = set(
            await asyncio.gather(*(pool.run(functools.partial(_nap, 0.2)) for _ in range(2)))
        )
        server = multiprocessing.forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
        assert len(first) == 2 and server is not None and _alive(server)
        # When nothing is read for longer than that
        # Then every reader exits, then the forkserver, and the pool keeps their CPU time
        assert await _gone(first, within_s=5.0)
        assert await _gone({server}, within_s=5.0)
        assert not pool._children and pool.cpu_s() > 0
        # And the next call starts a reader (and a forkserver) again and is read
        assert await pool.run(functools.partial(sum, [5, 6])) == 11
        assert {child.process.pid for child in pool._children}.isdisjoint(first)
    finally:
        pool.close()


async def test_a_reader_in_use_stays_while_an_idle_one_exits() -> None:
    # idle_s well above the 0.2 s cadence: a stall between reads must not retire the one in use
    # (a loaded machine)
    pool = readers.Pool(2, timeout_s=30.0, idle_s=2.0)
    try:
        a, b = await asyncio.gather(*(pool.run(functools.partial(_nap, 0.2)) for _ in range(2)))
        # one reader keeps reading a page every 0.2 s, until the other, left idle, has exited
        kept = await pool.run(_pid)
        idle = ({a, b} - {kept}).pop()
        deadline = time.monotonic() + 15
        while _alive(idle) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            assert await pool.run(_pid) == kept  # the most recently used reader is taken
        assert not _alive(idle) and _alive(kept)
    finally:
        pool.close()


async def test_idle_s_zero_keeps_the_readers() -> None:
    pool = readers.Pool(1, timeout_s=30.0, idle_s=0)
    try:
        pid = await pool.run(_pid)
        await asyncio.sleep(0.6)
        assert _alive(pid) and pool._watcher is None
    finally:
        pool.close()
