"""`lookout scheduler` as a real process: it loads only what it sends with (no agent, web or
database stack), and its start-up tick puts one message per periodic actor due that minute on
Redis, each stamped for the workers' skip delay."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis

from lookout import periodic, ticks

HEAVY = ("langgraph", "aiohttp", "asyncpg", "argon2", "lookout.actors", "lookout.broker")

# Runs `lookout scheduler`, then, once told to stop, prints the modules it had loaded.
PROBE = """
import atexit, json, sys
from lookout import cli
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), flush=True))
sys.exit(cli.main(["scheduler"]))
"""


def _queued(client: redis.Redis) -> list[dict[str, object]]:
    return [json.loads(raw) for raw in client.hgetall("dramatiq:dispatch.msgs").values()]


def test_the_scheduler_loads_no_worker_stack_and_sends_each_due_tick_once(
    redis_url: str, tmp_path: Path
) -> None:
    # Given a scheduler process, started early enough in a minute to tick at once
    while dt.datetime.now(dt.UTC).second > ticks.LATE_IN_MINUTE_S - 10:
        time.sleep(1)
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": "postgresql://unused/x",
           "LOOKOUT_SECRET_KEY": "x" * 32, "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:1"}  # fmt: skip
    started = dt.datetime.now(dt.UTC)
    process = subprocess.Popen(
        [sys.executable, "-c", PROBE], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    client = redis.Redis.from_url(redis_url)
    try:
        due = ticks.due(periodic.ALL, started)
        deadline = time.monotonic() + 30
        while len(_queued(client)) < len(due) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # a second send of anything would land by now
        queued = _queued(client)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
        client.close()

    # Then it stopped cleanly on SIGTERM, having loaded none of the worker's stack
    assert process.returncode == 0, err
    loaded = json.loads(out.strip().splitlines()[-1])
    assert [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY] == [], err
    assert not [m for m in loaded if m.startswith(("lookout.actors", "lookout.agent"))]

    # And the start-up tick sent each periodic actor due this minute exactly once
    names = sorted(str(m["actor_name"]) for m in queued)
    assert names == sorted(entry.actor_name for entry in due), (names, err)
    stamps = {str(m["options"]["scheduled_at"]) for m in queued}  # type: ignore[index]
    assert len(stamps) == 1
    assert dt.datetime.fromisoformat(stamps.pop()) - started < dt.timedelta(seconds=5)
    assert "Scheduling dispatch_due_watches at " in err
