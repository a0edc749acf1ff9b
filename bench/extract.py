"""Benchmark: main-content quality and CPU per page, Lookout's extraction against trafilatura's.

    .venv/bin/python bench/extract.py [--rounds 3] [--check]

On tests/corpus/articles (181 real news and blog pages with hand-made article text, from Zyte's
article-extraction-benchmark, MIT), each page is read by Lookout (`extract.extract`, formats
markdown and text, as web.scrape reads it: the `text` is scored) and by trafilatura 2 with its
defaults (`trafilatura.extract`, plain text), in the same run, interleaved page by page. Quality:
F1 / precision / recall with the benchmark's shingle metric (bench/_shingles.py). CPU: thread CPU
time of each call, the best of `rounds` per page, summed over the corpus. The paths Lookout took
(trafilatura's article or the page's region) are counted.
Targets: F1 >= 0.95; CPU per page <= 1x trafilatura's (aim: 0.5x).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shingles
import trafilatura

from lookout.capabilities import content, extract, prunes

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "articles"
F1_TARGET = 0.95
CPU_TARGET = 1.0
CPU_AIM = 0.5


def load() -> list[tuple[str, bytes, str]]:
    """(url, html bytes, true article text) of every page of the corpus."""
    truth = json.loads(gzip.decompress((CORPUS / "ground-truth.json.gz").read_bytes()))
    return [
        (entry["url"], gzip.decompress((CORPUS / "html" / f"{key}.html.gz").read_bytes()),
         entry["articleBody"])
        for key, entry in sorted(truth.items())
    ]  # fmt: skip


def lookout(body: bytes, url: str) -> str:
    return extract.extract(body, url=url, charset="utf-8", formats=("markdown", "text")).text or ""


def baseline(body: bytes, url: str) -> str:
    # As trafilatura ships: our extraction rewrites its XPaths in this process (prunes.py).
    with prunes.as_shipped():
        return trafilatura.extract(body.decode("utf-8"), url=url, include_comments=False) or ""


def timed(
    read: Callable[[bytes, str], str], body: bytes, url: str, rounds: int
) -> tuple[str, float]:
    best, output = float("inf"), ""
    for _ in range(rounds):
        started = time.thread_time()
        output = read(body, url)
        best = min(best, time.thread_time() - started)
    return output, best


def paths(pages: list[tuple[str, bytes, str]]) -> collections.Counter[str]:
    """How many pages took each of content.main_html's paths."""
    counted: collections.Counter[str] = collections.Counter()
    original = content.main_html

    def spy(*args: object, **kwargs: object) -> tuple[str, str, content.Path]:
        found = original(*args, **kwargs)  # type: ignore[arg-type]
        counted[found[2]] += 1
        return found

    content.main_html = spy  # type: ignore[assignment]
    try:
        for url, body, _ in pages:
            lookout(body, url)
    finally:
        content.main_html = original  # type: ignore[assignment]
    return counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    pages = load()
    counts: dict[str, list[_shingles.Counts]] = {"lookout": [], "trafilatura": []}
    cpu = {"lookout": 0.0, "trafilatura": 0.0}
    for url, body, truth in pages:
        for name, read in (("lookout", lookout), ("trafilatura", baseline)):
            output, seconds = timed(read, body, url, args.rounds)
            counts[name].append(_shingles.match(truth, output))
            cpu[name] += seconds
    print(f"corpus: {len(pages)} real article pages ({CORPUS.relative_to(CORPUS.parents[2])}), "
          f"trafilatura {trafilatura.__version__}, CPU best of {args.rounds} per page")  # fmt: skip
    scores = {name: _shingles.scores(found) for name, found in counts.items()}
    for name in ("lookout", "trafilatura"):
        s, ms = scores[name], 1000 * cpu[name] / len(pages)
        print(f"{name:<12} F1 {s['f1']:.3f}  precision {s['precision']:.3f}  "
              f"recall {s['recall']:.3f}  CPU {ms:5.1f} ms/page")  # fmt: skip
    taken = paths(pages)
    print("lookout paths: " + ", ".join(f"{path} {n}" for path, n in sorted(taken.items())))
    f1, ratio = scores["lookout"]["f1"], cpu["lookout"] / cpu["trafilatura"]
    f1_ok, cpu_ok = f1 >= F1_TARGET, ratio <= CPU_TARGET
    print(f"F1 {f1:.3f} vs trafilatura {scores['trafilatura']['f1']:.3f} "
          f"({'meets' if f1_ok else 'MISSES'} >= {F1_TARGET})")  # fmt: skip
    aim = "reached" if ratio <= CPU_AIM else "not reached"
    print(f"CPU ratio {ratio:.2f}x trafilatura ({'meets' if cpu_ok else 'MISSES'} <= "
          f"{CPU_TARGET:g}x; aim {CPU_AIM:g}x: {aim})")  # fmt: skip
    return 1 if args.check and not (f1_ok and cpu_ok) else 0


if __name__ == "__main__":
    sys.exit(main())
