"""Properties over real pages (tests/corpus/articles/, with the mutation corpus's noise kinds):
noise-only transformations never read as a change; any single-token edit inside the article
content always does, and its report shows the new token."""

from __future__ import annotations

import functools
import random
import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lookout.agent import changes
from lookout.capabilities import extract
from tests.corpus import mutations

PAGES = [page for page in mutations.page_ids()[1::9] if mutations.with_fixture(page)][:12]
_TOKEN = re.compile(r"(?<![\w'\u2019&#;-])(?:[A-Za-z]{2,}|\d{1,6})(?![\w'\u2019-])")
_AGO = re.compile(r"\s*(?:s|sec|min|h|hour|hr|d|day|second|minute)\w*\.?\s+ago", re.IGNORECASE)
SETTINGS = settings(
    max_examples=120, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)  # fmt: skip


@functools.lru_cache(maxsize=256)
def markdown(html: str) -> str:
    return extract.extract(html.encode("utf-8"), url="https://news.example/article").markdown or ""


def looked(before: str, after: str) -> changes.Looked:
    pages: dict[str, Any] = {}
    changes.track(pages, "u", changes.page_entry(markdown(before)), at="t0", title="",
                  scheduled=False)  # fmt: skip
    entry = changes.page_entry(markdown(after), pages["u"])
    found = changes.track(pages, "u", entry, at="t1", title="", scheduled=False)
    assert found is not None
    return found


@functools.cache
def base(page: str) -> str:
    made = mutations.with_fixture(page)
    assert made is not None
    return made


def noisy(source: str, kinds: list[str], seed: int, *, both_sides_only: bool) -> str:
    for kind in kinds:
        if both_sides_only and kind not in mutations.BOTH_SIDES:
            continue
        source = mutations.NOISE[kind](source, random.Random(f"{seed}:{kind}"))
    return source


@SETTINGS
@given(
    page=st.sampled_from(PAGES),
    kinds=st.lists(st.sampled_from(sorted(mutations.NOISE)), min_size=1, max_size=4, unique=True),
    seeds=st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)),
)
def test_noise_only_transformations_never_read_as_changed(
    page: str, kinds: list[str], seeds: tuple[int, int]
) -> None:
    before = noisy(base(page), kinds, seeds[0], both_sides_only=True)
    after = noisy(base(page), kinds, seeds[1], both_sides_only=False)

    found = looked(before, after)

    assert not found.changed, changes.describe(found)


@SETTINGS
@given(
    page=st.sampled_from(PAGES),
    where=st.floats(0, 1, exclude_max=True),
    which=st.floats(0, 1, exclude_max=True),
    new=st.from_regex(r"[a-z]{3,9}|[A-Z][a-z]{2,8}|[1-9][0-9]{0,4}", fullmatch=True),
)
def test_any_single_token_edit_inside_the_content_reads_as_changed(
    page: str, where: float, which: float, new: str
) -> None:
    source = base(page)
    segments = [s for s in mutations.content_of(source, page)]
    segment = segments[int(where * len(segments))]
    tokens = list(_TOKEN.finditer(segment.text))
    assume(tokens)
    token = tokens[int(which * len(tokens))]
    assume(token.group(0) != new and new.lower() not in ("ago", "now"))
    assume(not _AGO.match(segment.text, token.end()))  # "5 minutes ago" is a relative time
    at = segment.start + token.start()
    after = source[:at] + new + source[segment.start + token.end() :]
    # The extractor keeps this part of the article (else no reader of web.scrape could tell).
    assume(markdown(after) != markdown(source) and new in markdown(after))

    found = looked(source, after)

    assert found.changed
    assert new in changes.describe(found)


def test_hashed_class_tokens_with_markup_edits_do_not_read_as_changed() -> None:
    """Once a flip at the article's edge: the markup noise, after the attributes noise, wrote a
    lone </div> (its <p> had attributes by then), which closed the article's container early."""
    page = "42aad16bde9288623543642a9ce1a396be83e2db44aa2ff8cbbfe46e14abd7cc"
    kinds = ["attributes", "markup_only"]
    before = noisy(base(page), kinds, 245793, both_sides_only=True)
    after = noisy(base(page), kinds, 75532, both_sides_only=False)

    assert after.count('<div class="wrap">') == 1 and after.count("<em>09:00</em>.</p></div>") == 1
    assert not looked(before, after).changed
