"""`lookout route [TEXT]`: how the intent router reads a message, as JSON.

With TEXT (its words joined by spaces) it prints one JSON object; without, it reads one message
per stdin line and prints one JSON line for each, blank lines included, so output lines pair
with input lines.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import TextIO

from lookout.agent import router
from lookout.settings import Settings


def main(argv: list[str]) -> int:
    """Print the route of `argv` joined, or of every stdin line; 0 on success."""
    minimum = _min_interval()
    if argv:
        _print(" ".join(argv), minimum, sys.stdout)
        return 0
    for line in sys.stdin:
        _print(line.rstrip("\r\n"), minimum, sys.stdout)
    return 0


def _min_interval() -> int:
    # Only LOOKOUT_MIN_WATCH_MINUTES matters here: routing a message needs no database, Redis,
    # secret or public URL, so those are stubbed rather than demanded.
    stubbed = Settings.from_env(database_url="", redis_url="", secret_key="", public_url="http://-")
    return stubbed.min_watch_minutes


def _print(text: str, minimum: int, out: TextIO) -> None:
    found = router.route(text, now=datetime.now(UTC), min_interval_minutes=minimum)
    out.write(json.dumps(found.to_dict(), ensure_ascii=False) + "\n")
    out.flush()
