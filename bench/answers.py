"""The rule planner's extractive answers on real pages: for each of the 181 real articles of
tests/corpus/articles, a sentence of its hand-marked article body is turned into a question (its
words minus stop words, shuffled, one in three dropped) and the page is read as web.scrape reads
it; a hit is the sentence's longest distinctive word run appearing in the answer's first 300
characters. Prints hit rate beside the same check on the page's first 300 characters (what the
old excerpt answer showed), both in the same run."""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from lookout.agent import reading  # noqa: E402
from lookout.capabilities import extract  # noqa: E402

CORPUS = ROOT / "tests" / "corpus" / "articles"
FIRST = 300
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


def _questions(body: str, rng: random.Random) -> list[tuple[str, str]]:
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", body) if 12 <= len(s.split()) <= 40]
    picked = rng.sample(sentences, min(3, len(sentences)))
    out = []
    for sentence in picked:
        words = _WORD.findall(sentence)
        kept = [w for i, w in enumerate(words) if i % 3 != 2]
        rng.shuffle(kept)
        probe = " ".join(sentence.split()[2:6])  # four words from inside the sentence
        out.append(("what about " + " ".join(kept[:8]), probe))
    return out


def main() -> int:
    truth = json.loads(gzip.decompress((CORPUS / "ground-truth.json.gz").read_bytes()))
    rng = random.Random(7)
    hits = lead_hits = total = 0
    for path in sorted((CORPUS / "html").glob("*.html.gz")):
        key = path.name.removesuffix(".html.gz")
        url = "https://news.example/article"
        read = extract.extract(gzip.decompress(path.read_bytes()), url=url)
        page = {"url": url, "title": read.title, "markdown": read.markdown or ""}
        flat = " ".join(page["markdown"].split())
        for question, probe in _questions(truth[key]["articleBody"], rng):
            if probe not in flat:
                continue  # the extractor left that sentence out: not the answer's miss
            total += 1
            hits += probe in " ".join(reading.answer(question, page)[:FIRST].split())
            lead_hits += probe in flat[:FIRST]
    print(f"{total} questions on {len(truth)} real pages (sentences the extraction kept)")
    print(f"answer's first {FIRST} chars hold the asked sentence: {hits / total:.1%}")
    print(f"page's first {FIRST} chars (the old excerpt) hold it: {lead_hits / total:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
