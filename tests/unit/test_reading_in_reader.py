"""A turn's reading of a page for a question: ranked in a reader process, the same answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lookout.agent import reading
from lookout.capabilities import readers
from lookout.settings import Settings
from tests.unit.test_lazy_imports import ENV
from tests.unit.test_passages import MARKDOWN

PAGE = {"url": "https://hall.example/", "title": "Harbour Hall", "markdown": MARKDOWN}


@pytest.fixture
def plain() -> Iterator[Settings]:
    readers.close()  # this process's pool, made by the first ranked question of the test
    yield Settings.from_env(ENV)
    readers.close()


async def test_a_ranked_question_is_answered_in_a_reader_as_in_process(plain: Settings) -> None:
    asked = "how much is the gala on https://hall.example/ ?"
    got = await reading.answer_in_reader(asked, PAGE, plain)
    assert got == reading.answer(asked, PAGE)
    assert "Gala | €65" in got
    pool = readers.current()
    assert pool is not None and pool.cpu_s() > 0  # the reader did the ranking


async def test_a_question_for_the_whole_page_starts_no_reader(plain: Settings) -> None:
    got = await reading.answer_in_reader("summarize https://hall.example/", PAGE, plain)
    assert got == reading.lead(PAGE)
    assert readers.current() is None


async def test_a_reader_that_runs_out_of_time_answers_with_the_lead(
    plain: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "TIMEOUT_S", 0.0)  # the reader is stopped before it answers
    got = await reading.answer_in_reader("when do the doors open?", PAGE, plain)
    assert got == reading.lead(PAGE)
