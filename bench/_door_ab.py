"""Two versions of the REST door, interleaved: which costs less CPU a call, on this noisy machine.

    .venv/bin/python bench/_door_ab.py BEFORE_SRC AFTER_SRC [--slices 16] [--seconds 2]

A diagnostic, not part of `make bench`. For a change to the door's path, against the code before
it: `git worktree add /tmp/before <commit>` and pass /tmp/before/src and src. Three servers run
side by side as bench/door.py starts them (the bare handler, and bench/door.py's door server
once with each source tree first on its PYTHONPATH); the load client drives each for --seconds in
turn, --slices times, the order reversed every other slice. Each slice's CPU a request (server,
Postgres and Redis, as door.py reads them) is compared with the bare handler's slice next to it:
this machine's speed drifts within a minute (the bare handler's CPU a request 1.6-2.4 ms an hour
apart), so two door.py runs minutes apart can differ by more than a change does.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs
import door
import services

ROLES = ("bare", "before", "after")


async def measure(
    args: argparse.Namespace, env: dict[str, str], key: str, backing: list[int]
) -> dict[str, list[tuple[float, float]]]:
    """{role: [(server CPU ms, Postgres + Redis CPU ms) a request, each slice]}."""
    page_port = door.free_port()
    ports = {role: door.free_port() for role in ROLES}
    trees = {"before": args.before, "after": args.after}
    processes = [door.spawn("page", page_port, env, 50)]
    processes += [
        door.spawn("bare" if role == "bare" else "door", ports[role],
                   {**env, "PYTHONPATH": trees[role]} if role in trees else env, 50)
        for role in ROLES
    ]  # fmt: skip
    pids = {role: process.pid for role, process in zip(ROLES, processes[1:], strict=True)}
    try:
        await door.wait_up(f"http://127.0.0.1:{page_port}/tiny")
        for role in trees:
            await door.wait_up(f"http://127.0.0.1:{ports[role]}/healthz")
        body = {"url": f"http://127.0.0.1:{page_port}/tiny"}
        found: dict[str, list[tuple[float, float]]] = {role: [] for role in ROLES}
        for number in range(-1, args.slices):  # slice -1 warms every server up, uncounted
            for role in ROLES if number % 2 == 0 else ROLES[::-1]:
                url = f"http://127.0.0.1:{ports[role]}/v1/web/scrape"
                headers = {} if role == "bare" else {"Authorization": f"Bearer {key}"}
                server, service = _procs.cpu_seconds([pids[role]]), _procs.cpu_seconds(backing)
                result = await door.load(url, body, headers, args.seconds, args.concurrency)
                count = result["rps"] * result["elapsed_s"]
                if number >= 0:
                    found[role].append((
                        (_procs.cpu_seconds([pids[role]]) - server) * 1000 / count,
                        (_procs.cpu_seconds(backing) - service) * 1000 / count,
                    ))  # fmt: skip
        return found
    finally:
        for process in processes:
            process.terminate()
            process.wait()


def report(found: dict[str, list[tuple[float, float]]]) -> None:
    for role, slices in found.items():
        print(f"{role:<7} CPU ms a request, median of {len(slices)} slices: "
              f"{statistics.median(a + b for a, b in slices):.3f} (server "
              f"{statistics.median(a for a, _ in slices):.3f}, postgres+redis "
              f"{statistics.median(b for _, b in slices):.3f})")  # fmt: skip
    bare = [sum(figures) for figures in found["bare"]]
    for role in ("before", "after"):
        own = [sum(figures) - base for figures, base in zip(found[role], bare, strict=True)]
        print(f"{role:<7} door's own CPU a call: median {statistics.median(own):.3f} ms "
              f"(slices {min(own):.2f}-{max(own):.2f})")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", help="the source tree (src/) of the code before")
    parser.add_argument("after", help="the source tree (src/) of the code after")
    parser.add_argument("--slices", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    args.before, args.after = (str(Path(tree).resolve()) for tree in (args.before, args.after))
    with services.backing() as (dsn, redis_url):
        env = services.server_env(dsn, redis_url)
        key = asyncio.run(door.seed(dsn))
        found = asyncio.run(measure(args, env, key, door.service_pids(dsn, redis_url)))
    report(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
