"""Benchmark: content of real non-article pages, Lookout's extraction against trafilatura's.

    .venv/bin/python bench/kinds.py [--split dev|test|all] [--rounds 1] [--pages 0057,0123]

On tests/corpus/wcxb/sample: real pages of Murrough Foley's web-content-extraction-benchmark
(WCXB, CC-BY-4.0): products, category pages (collection), listings, forums, documentation and
service pages (SaaS, pricing), 20 of each from its development split and 10 of each from its
held-out test split, drawn with a fixed seed (tests/corpus/wcxb/README.md); 174 of the 180 have
a main content to score against (WCXB has none for the other 6). Each page is read by
Lookout (`extract.extract`, markdown and text, as web.scrape reads it: the text is scored) and by
trafilatura 2 with its defaults (`trafilatura.extract`, plain text), in the same run. Scored
against WCXB's human-reviewed main content with bench/extract.py's shingle metric (F1, precision,
recall), and with WCXB's own checks: the share of its `with` snippets found in the output (content
a correct reading keeps) and of its `without` snippets found (boilerplate it must not keep). CPU:
thread CPU time of each call, the best of `rounds`. Figures per kind and in all, both tools.
Tune on the dev split; the test split is there to see whether a change holds on pages it was not
made on.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shingles
import extract as articles

from lookout.capabilities import extract

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "wcxb" / "sample"
TOOLS = ("lookout", "trafilatura")


def load(split: str, only: set[str]) -> list[tuple[str, dict[str, object], bytes]]:
    """(file id, its ground truth, html bytes) of the pages of `split` ("all": both) that have a
    main content to compare with (6 of the 180 have none in WCXB: left out)."""
    truth = json.loads(gzip.decompress((CORPUS / "ground-truth.json.gz").read_bytes()))
    return [
        (fid, entry, gzip.decompress((CORPUS / "html" / f"{fid}.html.gz").read_bytes()))
        for fid, entry in sorted(truth.items())
        if split in ("all", entry["split"]) and (not only or fid in only) and entry["main_content"]
    ]


def lookout(body: bytes, url: str) -> str:
    return extract.extract(body, url=url, formats=("markdown", "text")).text or ""


def _plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def snippets(output: str, wanted: list[str]) -> tuple[int, int]:
    """(found, asked) of `wanted` in `output`, case and spacing aside."""
    plain = _plain(output)
    return sum(_plain(snippet) in plain for snippet in wanted), len(wanted)


def _page_f1(counts: _shingles.Counts) -> float:
    tp, fp, fn = counts
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _scores(pages: list[_shingles.Counts]) -> dict[str, float]:
    """_shingles.scores, with 0 for a tool that read nothing of any page."""
    if not any(tp + fp for tp, fp, _ in pages) or not any(tp + fn for tp, _, fn in pages):
        return {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    return _shingles.scores(pages)


def _ratio(pairs: list[tuple[int, int]]) -> float:
    asked = sum(n for _, n in pairs)
    return sum(found for found, _ in pairs) / asked if asked else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pages", default="", help="comma-separated file ids (diagnosis)")
    parser.add_argument("--each", action="store_true", help="print every page's F1")
    args = parser.parse_args()
    pages = load(args.split, {fid for fid in args.pages.split(",") if fid})
    read = {"lookout": lookout, "trafilatura": articles.baseline}
    # (split, kind) -> tool -> [shingle counts], [with], [without]; tool -> CPU seconds
    counts: dict[tuple[str, str], dict[str, list[_shingles.Counts]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    kept: dict[tuple[str, str], dict[str, list[tuple[int, int]]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    leaked: dict[tuple[str, str], dict[str, list[tuple[int, int]]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    cpu = dict.fromkeys(TOOLS, 0.0)
    for fid, truth, body in pages:
        group = (str(truth["split"]), str(truth["kind"]))
        line = []
        for tool in TOOLS:
            output, seconds = articles.timed(read[tool], body, str(truth["url"]), args.rounds)
            cpu[tool] += seconds
            found = _shingles.match(str(truth["main_content"]), output)
            counts[group][tool].append(found)
            kept[group][tool].append(snippets(output, list(truth["with"])))  # type: ignore[arg-type]
            leaked[group][tool].append(snippets(output, list(truth["without"])))  # type: ignore[arg-type]
            line.append(f"{tool} {_page_f1(found):.2f}")
        if args.each:
            print(f"{fid} {group[0]:<4} {group[1]:<13} " + "  ".join(line))
    print(f"corpus: {len(pages)} real non-article pages ({CORPUS.relative_to(CORPUS.parents[3])}), "
          f"split {args.split}, CPU best of {args.rounds} per page")  # fmt: skip
    print(f"{'split':<5} {'kind':<13} {'pages':>5}  " + "  ".join(
        f"{tool:<11} F1    P     R     with  without" for tool in TOOLS
    ))  # fmt: skip
    rows = sorted(counts) + [(split, "all") for split in sorted({s for s, _ in counts})]
    for split, kind in rows:
        groups = [g for g in counts if g[0] == split and (kind == "all" or g[1] == kind)]
        cells = []
        for tool in TOOLS:
            s = _scores([c for g in groups for c in counts[g][tool]])
            with_ = _ratio([p for g in groups for p in kept[g][tool]])
            without = _ratio([p for g in groups for p in leaked[g][tool]])
            cells.append(f"{'':<11} {s['f1']:.3f} {s['precision']:.3f} {s['recall']:.3f} "
                         f"{with_:.3f} {without:.3f}  ")  # fmt: skip
        n = sum(len(counts[g]["lookout"]) for g in groups)
        print(f"{split:<5} {kind:<13} {n:>5}  " + "".join(cells).rstrip())
    ms = {tool: 1000 * cpu[tool] / len(pages) for tool in TOOLS}
    print(f"CPU per page: lookout {ms['lookout']:.1f} ms, trafilatura {ms['trafilatura']:.1f} ms "
          f"({ms['lookout'] / ms['trafilatura']:.2f}x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
