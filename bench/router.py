"""How fast the intent router reads a message, against baselines timed in the same run.

    .venv/bin/python bench/router.py [--rounds N]

Figures, each a ratio to a baseline measured here and now (so the machine cancels out):
- route() per message vs. a naive keyword match (substring lookups plus a URL regex);
- route() per message with its typo cache cold vs. warm;
- urls.extract() vs. a plain `https?://\\S+` regex scan.
The messages are the labelled set in tests/unit/router_cases.jsonl.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from lookout.agent import router, urls

CASES = Path(__file__).resolve().parents[1] / "tests" / "unit" / "router_cases.jsonl"
_PLAIN_URL = re.compile(r"https?://\S+")
_STANDING = ("watch", "track", "monitor", "keep an eye", "notify", "alert", "every", "daily")


def keyword_match(text: str) -> tuple[str, list[str]]:
    """The naive router: a few substring lookups and a plain URL regex."""
    lowered = text.lower()
    found = _PLAIN_URL.findall(text)
    if "stop" in lowered or "cancel" in lowered:
        return "control", found
    if any(word in lowered for word in _STANDING):
        return "standing", found
    return ("ambiguous" if found else "one_shot"), found


def per_message_us(read: Callable[[str], object], texts: list[str], rounds: int) -> float:
    """Best-of-`rounds` mean time of `read` over `texts`, in microseconds per message."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            read(text)
        best = min(best, time.perf_counter() - start)
    return best / len(texts) * 1e6


def cold_route(text: str) -> router.Route:
    router._fix_word.cache_clear()
    return router.route(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    texts = [json.loads(line)["text"] for line in CASES.read_text("utf-8").splitlines() if line]
    for text in texts:  # warm imports, regex caches and the typo cache
        router.route(text)
    keyword = per_message_us(keyword_match, texts, rounds)
    routed = per_message_us(router.route, texts, rounds)
    cold = per_message_us(cold_route, texts, max(3, rounds // 5))
    scan = per_message_us(_PLAIN_URL.findall, texts, rounds)
    extract = per_message_us(urls.extract, texts, rounds)
    print(f"{len(texts)} messages, best of {rounds} rounds")
    _figure("route() vs keyword match", routed, keyword)
    _figure("route() cold vs warm typo cache", cold, routed)
    _figure("urls.extract() vs plain regex scan", extract, scan)
    print(f"{'route() share of a 1 ms budget':<36} {routed / 1000:8.1%}")


def _figure(label: str, ours: float, baseline: float) -> None:
    print(f"{label:<36} {ours / baseline:7.2f}x  ({ours:.2f} us vs {baseline:.2f} us per message)")


if __name__ == "__main__":
    main()
