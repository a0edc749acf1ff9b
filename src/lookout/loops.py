"""The event loop of every Lookout process (uvloop, unless LOOKOUT_EVENT_LOOP=asyncio), and
its heap frozen once the process is open.

uvloop took a scheduled turn from 9.6 to 7.2 ms of worker CPU (bench/versus.py) and the REST
door from 539 to 617 requests/s (bench/door.py): most of a turn's work is round trips to
Postgres, Redis and web pages, and each one costs less on uvloop. Installed before the process
makes its first loop (dramatiq's event-loop thread makes its own with `new_event_loop`, which
follows the policy).
"""

from __future__ import annotations

import asyncio
import gc

import uvloop

from lookout.errors import ConfigError
from lookout.settings import Settings

CHOICES = ("uvloop", "asyncio")


def install(settings: Settings) -> None:
    """Make the loops this process creates from now on the configured kind."""
    if settings.event_loop not in CHOICES:
        raise ConfigError(f"LOOKOUT_EVENT_LOOP: expected one of {', '.join(CHOICES)}, "
                          f"got {settings.event_loop!r}")  # fmt: skip
    if settings.event_loop == "uvloop":
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def freeze_heap() -> None:
    """Put what the process allocated to open (modules, schemas, the compiled graph, pools:
    ~280,000 objects in a worker) out of the garbage collector's reach: each full collection
    scanned them all, 158 ms with the event loop stopped. Call once, when the process is open.
    The collector runs again from here if hold_collector() stopped it."""
    gc.collect()
    gc.freeze()
    gc.enable()


def hold_collector() -> None:
    """No collection until freeze_heap(): importing and opening a process makes hundreds of
    thousands of objects that all live, and the collections they set off were ~17 % of the web
    process's import CPU (2.2 s against 2.7 s user CPU for `import lookout.app`, 3 runs each);
    their garbage, ~1.8 MiB, waits for freeze_heap's one collection."""
    gc.disable()


def raise_if_cancelling() -> None:
    """In a retry loop's error branch: re-raise a cancellation that redis-py handed over as a
    connection error (or swallowed). A loop that retried it instead outlived its owner, and the
    owner's `task.cancel(); await task` hung the event loop's shutdown (CI saw it: the hub)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
