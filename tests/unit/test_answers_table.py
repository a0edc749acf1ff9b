"""The rule planner's answers over pages built like real ones (product, pricing, menu, article,
docs, event calendar, job listing, two products compared): for each question the expected fact is
in the first 300 characters of the answer, and lists and tables come out as lists and tables.

Each page goes through the same extraction web.scrape uses, so the table measures what a person
reads, not what a hand-made markdown string would give."""

from __future__ import annotations

import collections
import json
import pathlib
from typing import Any

import pytest

from lookout.agent import comparing, reading
from lookout.capabilities import extract

HERE = pathlib.Path(__file__).parent
PAGES = HERE / "answer_pages"
CASES = [json.loads(line) for line in (HERE / "answer_cases.jsonl").read_text().splitlines()]
FIRST = 300


def scraped(name: str) -> dict[str, Any]:
    """A page as web.scrape returns it (markdown, title, metadata when the extractor has it)."""
    url = f"https://{name.replace('_', '-')}.example/page"
    read = extract.extract((PAGES / f"{name}.html").read_bytes(), url=url, formats=("markdown",))
    page = {"url": url, "final_url": url, "title": read.title, "markdown": read.markdown}
    metadata = getattr(read, "metadata", None)
    if metadata is not None:
        page["metadata"] = metadata if isinstance(metadata, dict) else dict(vars(metadata))
    return page


def answer_of(case: dict[str, Any]) -> str:
    pages = [scraped(name) for name in case["pages"]]
    if len(pages) > 1:
        return comparing.compare(pages)
    return reading.answer(case["q"], pages[0])


def test_the_table_covers_every_kind_of_page() -> None:
    kinds = collections.Counter(name for case in CASES for name in case["pages"])
    assert len(CASES) >= 60
    assert {
        "product",
        "pricing",
        "menu",
        "article",
        "docs",
        "event",
        "listing",
        "product_b",
    } <= set(kinds)


@pytest.mark.parametrize("case", CASES, ids=[c["q"][:50] for c in CASES])
def test_the_expected_fact_comes_first(case: dict[str, Any]) -> None:
    answer = answer_of(case)
    head = answer[: case.get("within", FIRST)]
    for expected in case["expect"]:
        assert expected in head, f"{expected!r} not in the answer's start:\n{answer}"
    if "any" in case:
        assert any(expected in head for expected in case["any"]), answer
    if case.get("shape") == "list":
        assert any(line.startswith(("- ", "* ", "1. ")) for line in answer.splitlines()), answer
    if case.get("shape") == "table":
        rows = [line for line in answer.splitlines() if line.startswith("|")]
        assert len(rows) >= 3 and set(rows[1].replace("|", "").strip()) <= {"-", ":", " "}, answer


def test_list_items_are_not_glued_into_one_paragraph() -> None:
    answer = reading.answer("what are the features?", scraped("product"))
    features = [line for line in answer.splitlines() if line.startswith("- ")]
    assert "- Works on gas, electric, ceramic and induction hobs" in features
    assert "- Dishwasher-safe stainless steel body" in features


def test_a_compare_aligns_the_same_facts_of_each_page() -> None:
    answer = comparing.compare([scraped("product"), scraped("product_b")])
    rows = {
        line.split("|")[1].strip(): line for line in answer.splitlines() if line.startswith("|")
    }
    assert "€59.00" in rows["Price"] and "€79.00" in rows["Price"]
    assert "1.7 litres" in rows["Capacity"] and "2.5 litres" in rows["Capacity"]
    assert "Only on **Whistling Kettle 2.5 L \u2013 Copper" in answer
    assert "words" not in answer  # word counts are not a comparison


def test_a_question_with_nothing_to_rank_gets_the_lead_and_sections() -> None:
    answer = reading.answer("https://product.example/page", scraped("product"))
    assert answer.startswith("**Stovetop Kettle 1.7 L")
    assert "- Specifications" in answer
