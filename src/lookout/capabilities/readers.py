"""Reading pages off the event loop: a few reader processes per Lookout process, made on first use.

Why: trafilatura spends 9-16 ms of CPU on a typical page, in Python, under the GIL. Read in a
thread (what web.scrape did before), a call's pages are read one at a time whatever the cores,
and every other request of the process's event loop waits its turn behind them: bench/scrape.py
measured 54.5 pages/s at 50 ms server latency, 0.36x bare fetches (target 0.7x). Read here, a
process's pages are read `size` at a time, each on its own core, and the loop only fetches.
What was seen with them, on this machine while other work kept both cores busy (load average
4-16 on 2 cores): bench/scrape.py 24.8-86.7 pages/s at 50 ms (0.18-0.58x, the best at the
lowest load), 13.7-20.3 ms CPU a page readers included; readers and a thread alternated in one
run at load 5: 49-51 against 42-47 pages/s; 200 pages read back to back by 1 and by 2 readers:
39 and 34 pages/s (29 and 28.5 at load 7), i.e. the machine had half a core to give (1 s of
CPU took 1.8 s in one reader; 2 x 1 s took 2.77 s in two, 3.20 s in the stdlib's pool). At
12.8 ms a page in the readers, 0.7x of 150 pages/s needs about 1.4 cores free: the target
could not be shown on a machine that did not have them.

How: `size` children, each behind a pipe, started by multiprocessing's forkserver: forked from a
server process that has imported the reader once (PRELOAD), so a child starts in milliseconds,
shares those pages, and is never forked from a process holding threads, locks and sockets. A
call runs on one of `size` threads of this pool's own executor; that is the bounded queue: at
most `size` pages are in the children at once, the others wait in the executor's queue, which
the callers bound (web.scrape reads at most fetch_concurrency pages of a call at a time). The
thread sends the call, waits at most `timeout_s` for the answer, else kills the child and
starts another (ReadTimeout); a child that dies (a parser crash, out of memory) is replaced the
same way (ReadCrashed); an exception the reader raises comes back as itself. Nothing polls: an
idle pool is blocked threads and children asleep in recv().

Chosen over pebble 5.2, which has the same per-task timeout and replaces killed workers, but
whose manager threads wake 20 times a second: measured here, 0.27 % of a core per idle process,
in every web and worker process (its round trip was 0.39 ms for a 50 KB page). The stdlib's
ProcessPoolExecutor cannot stop one task: a timeout would break the whole pool and every page
in it. Measured here (2 cores, shared): the first page waits ~1-3 s for the forkserver and its
imports (on a reader thread, never on the loop); after 100 pages of bench/corpus.py the
forkserver holds 72 MB RSS (29 MB PSS) and each reader ~70 MB RSS (35-44 MB PSS).

The main module is imported again by each child, as with any spawn / forkserver child: an entry
point must keep its work under `if __name__ == "__main__"` (the console scripts do).

Idle: a reader that has read nothing for `idle_s` seconds (LOOKOUT_READ_IDLE_S, 60; 0 keeps
them) exits, and with the last one the forkserver, so a process that read no page for a minute
holds no reader memory (~110 MB PSS per pool with two readers). A watcher thread sleeps until the
oldest idle reader's deadline (nothing polls) and takes the reader out of the idle list under the
pool's lock before closing its pipe, so no page is ever sent to a reader that is leaving; it
exits itself when no reader is left. The next page starts them again. Measured here (2 shared
cores, load average ~10): the first page after an idle exit waits 1.7-3.3 s (the forkserver
imports the reader again: 0.9 s of CPU, what `import lookout.capabilities.extract` costs a fresh
interpreter; the reader's fork is milliseconds), on a reader thread, never on the event loop; a
warm page took 43-95 ms. A process reading at least one page a minute never pays it.

Priority: readers run at niceness +NICE (LOOKOUT_READ_NICE, 10; 0: their parent's). Reading is
batch work; what waits on it does not: a verb call's round trips to Postgres and Redis, the
event loop, other calls' fetches. At the same priority, the readers' CPU-bound pages make each
of those wakeups wait for a core. Measured 2026-12-06, readers at 0 and at 10 alternated in one
hour: bench/door.py's added latency on a one-page call (a real article at 50 ms page latency)
+9.2 / +9.5 % at 0, +8.0 / +3.5 % at 10, the bare handler's p50 61.9-63.5 ms either way; its
article phase alone, 0 / 5 / 10 alternated four times (00:15): the door's p50 above the bare
handler's by +6.4 ms on average at 0 (+3.6 to +8.8), +4.7 at 5, +3.1 at 10 (bare 60.4-64.2). The
readers still get every cycle nothing else wants: bench/scrape.py at 50 ms, alternated twice,
0.58 / 0.53x bare fetches at 0 and 0.56 / 0.58x at 10 (synthetic), 0.52 / 0.53x and 0.54 /
0.58x (real articles). What it costs: against a busy process at niceness 0 on the same core, a
reader at 10 gets about a tenth of it (at 5, a quarter); a host that runs other busy work beside
Lookout may want a lower value.

Where: a page is read in the process that runs the call: the web process (inline calls of up
to INLINE_PAGES pages, chat turns) and each worker process (jobs, watches). web.scrape reads its
pages here, web.discover outlines the pages it crawls (title, snippet, links), a chat turn ranks
a page's passages (agent.reading). The pool is made on a process's first page, so a process
that never reads one never starts it. The web app's and the worker's shutdown close it
(close()); children also exit when their pipe closes, so a parent that dies leaves none behind
(seen: after a SIGKILL of the parent, the idle readers exit at once, a busy one when its page is
done, then the forkserver).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import gc
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from lookout.settings import Settings

logger = logging.getLogger(__name__)

IDLE_S = 60.0  # a reader that read nothing for this long exits (LOOKOUT_READ_IDLE_S)
TIMEOUT_S = 10.0  # content.py bounds a page to well under a second; this is for a runaway one
# trafilatura loads at a process's first page (capabilities/content.py): the readers hold it.
# Questions are ranked there too (agent.reading.answer_in_reader): BM25 and numpy, ~12 MiB RSS,
# are held once by the forkserver and shared by its readers, not by every web and worker process
# (their import adds ~150 ms of CPU to a forkserver's start, measured here 2026-12-04).
PRELOAD = ["lookout.capabilities.extract", "trafilatura", "bm25s", "Stemmer"]
# A body this small is read on the event loop (well under a millisecond): handing it to a reader
# process and back costs a sizeable part of reading it. Bigger ones go to the readers:
# trafilatura spends several milliseconds on a 16 KB page, under the GIL, which would stall every
# other request of the loop and read one page at a time whatever the cores.
INLINE_BYTES = 2 * 1024
_JOIN_S = 2.0
# Readers run at this niceness above their parent's (see "Priority" above).
NICE = 10
T = TypeVar("T")


class ReadTimeout(Exception):
    """The page was not read within the pool's timeout; the child reading it was stopped."""


class ReadCrashed(Exception):
    """The child reading the page died."""


def default_size(fetch_concurrency: int) -> int:
    """One reader per core this process may use, at most one per page a call fetches at once."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, fetch_concurrency))


@dataclasses.dataclass(eq=False)
class _Child:
    process: BaseProcess
    conn: Connection
    cpu_s: float = 0.0  # the child's CPU time since it started, as it last reported


class Pool:
    """`size` reader processes; `run(function)` calls `function()` in one of them."""

    def __init__(
        self, size: int, *, timeout_s: float = TIMEOUT_S, idle_s: float = IDLE_S, nice: int = NICE
    ) -> None:
        self.size, self.timeout_s, self.idle_s, self.nice = size, timeout_s, idle_s, nice
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(PRELOAD)
        self._threads = concurrent.futures.ThreadPoolExecutor(size, thread_name_prefix="reader")
        self._idle: list[tuple[_Child, float]] = []  # oldest first, each with when it went idle
        self._children: set[_Child] = set()
        self._lock = threading.Lock()
        self._woken = threading.Condition(self._lock)
        self._watcher: threading.Thread | None = None
        self._starting = 0  # readers being started: the forkserver must stay
        self._retired_cpu_s = 0.0
        self._closed = False

    async def run(self, function: Callable[[], T]) -> T:
        """`function()` (picklable, as its result) in a reader process; its exception if it
        raises one; ReadTimeout / ReadCrashed if it runs too long or its process dies."""
        loop = asyncio.get_running_loop()
        answer: T = await loop.run_in_executor(self._threads, self._call, function)
        return answer

    def cpu_s(self) -> float:
        """CPU seconds the readers have spent, the ones replaced included (for benchmarks)."""
        with self._lock:
            return self._retired_cpu_s + sum(child.cpu_s for child in self._children)

    def close(self) -> None:
        """Stop the children: idle ones when their pipe closes, busy ones at once."""
        with self._lock:
            self._closed = True
            self._woken.notify_all()
            idle, self._idle = [child for child, _ in self._idle], []
        self._threads.shutdown(wait=False, cancel_futures=True)
        for child in idle:
            child.conn.close()  # the child's recv() ends: it returns
            child.process.join(_JOIN_S)
        with self._lock:
            busy = [child for child in self._children if child not in idle]
        for child in busy:
            child.process.kill()  # the thread waiting on it sees the pipe close
            child.process.join(_JOIN_S)

    def _call(self, function: Callable[[], T]) -> T:
        child = self._sent(function)
        try:
            if not child.conn.poll(self.timeout_s):
                raise ReadTimeout(f"not read within {self.timeout_s:g} s")
            ok, value, child.cpu_s = child.conn.recv()
        except ReadTimeout:
            self._retire(child)
            raise
        except (EOFError, OSError):
            self._retire(child)
            raise ReadCrashed(f"the reader process died ({child.process.exitcode})") from None
        self._release(child)
        if not ok:
            raise value
        result: T = value
        return result

    def _sent(self, function: Callable[[], T]) -> _Child:
        """The child `function` was sent to. One that died while idle (killed from outside, out
        of memory) is replaced and the call sent to the new one: the page did nothing wrong."""
        for _ in range(2):
            child = self._take()
            try:
                child.conn.send(function)
                return child
            except OSError:
                self._retire(child)
            except Exception:
                self._release(child)  # nothing was sent (it did not pickle): the child is fine
                raise
        raise ReadCrashed("no reader process could be reached")

    def _take(self) -> _Child:
        # One thread holds one child at a time and there are `size` threads, so when none is
        # idle the others are all busy and there is room for one more.
        with self._lock:
            if self._idle:
                return self._idle.pop()[0]  # the most recent: the others can age out
            if self._closed:
                raise ReadCrashed("the readers are shut down")
            self._starting += 1
        try:
            return self._start()
        finally:
            with self._lock:
                self._starting -= 1

    def _start(self) -> _Child:
        parent, end = self._context.Pipe()
        process = self._context.Process(
            target=_serve, args=(end, self.nice), name="reader", daemon=True
        )
        process.start()
        end.close()
        child = _Child(process, parent)
        with self._lock:
            self._children.add(child)
        return child

    def _release(self, child: _Child) -> None:
        """`child` is idle again; the watcher learns when it may exit."""
        with self._lock:
            if self._closed:  # a call that close() did not wait for: its child exits now
                child.conn.close()
                return
            self._idle.append((child, time.monotonic()))
            if self.idle_s <= 0:
                return
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="reader-idle", daemon=True
                )
                self._watcher.start()
            self._woken.notify()

    def _watch(self) -> None:
        """Stop each reader idle for `idle_s`, then the forkserver when none is left; return
        then (the next _release starts another watcher)."""
        while True:
            with self._lock:
                expired = self._expired()
                if expired is None:
                    self._watcher = None
                    if not self._children and not self._starting and not self._closed:
                        _stop_forkserver()  # under the lock: no reader is being started
                    return
            for child in expired:
                child.conn.close()  # its recv() ends: it exits
                child.process.join(_JOIN_S)

    def _expired(self) -> list[_Child] | None:
        """(Under the lock) the idle readers past their time, taken out of the pool, after
        sleeping until there is one; None when the watcher has nothing left to watch."""
        while not self._closed and self._children:
            if not self._idle:
                self._woken.wait()  # every reader is busy: woken when one comes back
                continue
            _, since = self._idle[0]
            left = since + self.idle_s - time.monotonic()
            if left > 0:
                self._woken.wait(left)
                continue
            now = time.monotonic()
            expired = [child for child, since in self._idle if now - since >= self.idle_s]
            self._idle = self._idle[len(expired) :]
            self._children.difference_update(expired)
            self._retired_cpu_s += sum(child.cpu_s for child in expired)
            return expired
        return None

    def _retire(self, child: _Child) -> None:
        child.process.kill()
        child.process.join(_JOIN_S)
        child.conn.close()
        with self._lock:
            self._children.discard(child)
            self._retired_cpu_s += child.cpu_s
            self._woken.notify()  # the watcher may have no reader left to wait for
        logger.warning("a reader process was stopped (exit code %s)", child.process.exitcode)


def _serve(conn: Connection, nice: int) -> None:
    """A child's life: run each function it is sent; answer (ok, result or error, CPU so far)."""
    # A Ctrl-C or a SIGTERM sent to the whole process group (a terminal, systemd's control
    # group) is for the parent: it lets its calls in flight finish, then closes our pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # What the forkserver preloaded lives as long as we do: out of the collector's sight, a full
    # collection costs 0.1 ms instead of 42 (67,000 objects: trafilatura, bm25s, numpy), once in
    # a while in the middle of some page, and it leaves the pages we share with the forkserver
    # unwritten. Measured 2026-12-06 (a reader after 40 pages of bench/corpus.py).
    gc.freeze()
    if nice:
        with contextlib.suppress(OSError):  # raising one's own niceness is allowed on Linux
            os.nice(nice)
    while True:
        try:
            function = conn.recv()
        except (EOFError, OSError):
            return  # the parent closed the pipe, or died
        try:
            answer: tuple[bool, Any] = (True, function())
        except Exception as exc:
            answer = (False, _portable(exc))
        try:
            conn.send((*answer, time.process_time()))
        except OSError:
            return  # the parent went away while we read: nobody to answer
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            conn.send((False, RuntimeError(f"unpicklable answer: {exc}"), time.process_time()))


def _portable(exc: Exception) -> Exception:
    """`exc` if it survives the pipe (some exceptions pickle but cannot be rebuilt), else a
    RuntimeError that says what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}"[:2000])
    return exc


def _stop_forkserver() -> None:
    """Stop multiprocessing's forkserver of this process (29 MB PSS with the reader's imports);
    the next reader starts it again. `_stop` is what CPython's own tests call (3.8-3.13)."""
    stop = getattr(multiprocessing.forkserver._forkserver, "_stop", None)
    if stop is not None:
        stop()


_pool: Pool | None = None
_pool_lock = threading.Lock()


def pool(size: int, *, idle_s: float = IDLE_S, nice: int = NICE) -> Pool:
    """This process's pool, made with `size` readers on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = Pool(size, timeout_s=TIMEOUT_S, idle_s=idle_s, nice=nice)
            atexit.register(_pool.close)
        return _pool


def of(settings: Settings) -> Pool:
    """This process's pool, sized by the settings: LOOKOUT_READ_PROCESSES, else one per core."""
    size = settings.read_processes or default_size(settings.fetch_concurrency)
    return pool(size, idle_s=settings.read_idle_s, nice=settings.read_nice)


async def read(settings: Settings, size: int, function: Callable[[], T]) -> T:
    """`function()`, the reading of a page of `size` bytes: here for a page of at most
    INLINE_BYTES, else in this process's readers (Pool.run)."""
    if size <= INLINE_BYTES:
        return function()
    return await of(settings).run(function)


def current() -> Pool | None:
    """This process's pool if one was made."""
    return _pool


def close() -> None:
    """Stop this process's readers, if it started any (at shutdown; a later read starts anew)."""
    global _pool
    with _pool_lock:
        closing, _pool = _pool, None
    if closing is not None:
        atexit.unregister(closing.close)
        closing.close()
