"""The article-extraction benchmark's metric, written afresh from its description.

Zyte's article-extraction-benchmark (evaluate.py, `string_shingle_matching`) scores a page by
4-gram shingles of its `\\w+` tokens: a shingle seen n times in the truth and m times in the
prediction adds min(n, m) true positives, the excess false positives or false negatives; the three
are divided by their sum so that a long page weighs what a short one does. Precision and recall
are the means over pages (a page with nothing predicted and nothing true counts 1); F1 is the
harmonic mean of the two means. Tokens are compared as found (the truth's case is kept: the
original tokenizes with IGNORECASE, which does not change the tokens).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable

_TOKEN = re.compile(r"\w+")
N = 4

Counts = tuple[float, float, float]


def shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    # A text shorter than N tokens is one (short) shingle; an empty one has none.
    grams = (tuple(tokens[i : i + N]) for i in range(max(1, len(tokens) - N + 1)))
    return Counter(gram for gram in grams if gram)


def match(true: str, pred: str) -> Counts:
    """(tp, fp, fn) of one page, normalized to sum to 1 (all 0 when both are empty)."""
    want, got = shingles(true), shingles(pred)
    tp = sum((want & got).values())
    fp = sum((got - want).values())
    fn = sum((want - got).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fp == 0 else tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fn == 0 else tp / (tp + fn)


def scores(pages: Iterable[Counts]) -> dict[str, float]:
    """F1, precision and recall over pages, as the benchmark reports them."""
    counts = list(pages)
    precision = statistics.mean(_precision(*c) for c in counts if c[0] + c[1] > 0)
    recall = statistics.mean(_recall(*c) for c in counts if c[0] + c[2] > 0)
    return {
        "f1": 2 * precision * recall / (precision + recall),
        "precision": precision,
        "recall": recall,
    }
