"""Reading import files without I/O: changedetection.io intervals as cadences, its tags and
paused flag, and what is refused."""

from __future__ import annotations

import json
import pathlib

import pytest

from lookout import errors
from lookout.watches import imports

SAMPLE = pathlib.Path(__file__).parents[1] / "corpus" / "changedetection" / "url-watches.json"


@pytest.mark.parametrize(
    ("minutes", "cron"),
    [(1, "*/1 * * * *"), (5, "*/5 * * * *"), (7, "*/10 * * * *"), (45, "0 * * * *"),
     (60, "0 * * * *"), (90, "0 */2 * * *"), (180, "0 */3 * * *"), (300, "0 */6 * * *"),
     (780, "0 9 * * *"), (1440, "0 9 * * *"), (2880, "0 9 */2 * *"), (20160, "0 9 * * 1")],
)  # fmt: skip
def test_an_interval_becomes_a_cadence_never_more_often(minutes: int, cron: str) -> None:
    assert imports.cron_every(minutes) == cron


def test_the_sample_backup_maps_url_title_interval_tags_and_paused() -> None:
    planned = imports.from_cdio(json.loads(SAMPLE.read_text()), min_minutes=5)

    assert [(p.title, p.cadence, p.tags, p.enabled) for p in planned] == [
        ("Oat milk price", "0 * * * *", ("Groceries",), True),
        ("Release notes — News Example", "0 */3 * * *", ("Work", "changelog"), True),
        ("Status page", "*/30 * * * *", (), False),
    ]
    assert planned[0].message == "what is on https://shop.example/oat-milk"


def test_a_watch_faster_than_the_minimum_is_slowed_to_it() -> None:
    document = {"watching": {"a": {"url": "https://x.example/", "time_between_check_use_default":
                                   False, "time_between_check": {"seconds": 30}}}}  # fmt: skip
    [planned] = imports.from_cdio(document, min_minutes=15)
    assert planned.cadence == "*/15 * * * *"


@pytest.mark.parametrize(
    "document",
    [[], {"watches": []}, {"watching": []}, {"watching": {"a": "https://x.example"}},
     {"watching": {"a": {"url": "javascript:alert(1)"}}}, {"watching": {"a": {"url": "http://[::1"}}},
     {"watching": {str(n): {"url": "https://x.example"} for n in range(501)}}],
)  # fmt: skip
def test_what_is_not_a_changedetection_watch_list_is_refused(document: object) -> None:
    with pytest.raises(errors.InvalidInput):
        imports.from_cdio(document, min_minutes=5)


def test_tags_are_trimmed_bounded_and_deduplicated() -> None:
    assert imports.clean_tags([" a  b ", "a b", "", "x" * 80]) == ("a b", "x" * 50)
    assert len(imports.clean_tags([str(n) for n in range(50)])) == imports.MAX_TAGS
