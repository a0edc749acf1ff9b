"""Properties of the three parsers hostile text reaches first (pure: no servers).

- the body decoder (jsonin): any bytes are a document or NotJson (invalid_input), never another
  exception; huge integers, non-finite numbers and deep nesting are NotJson; every finite JSON
  document reads back as itself;
- the cadence parser (agent/cadence, through the router): any text with any numbers in it is a
  cadence or none, and every cadence is a cron that fires at least once a year, no more often
  than the minimum interval; crons from a client are accepted only so (watches/schedule);
- the stream-id parser (chat/stream_ids): any text is an id within Redis's range or None.

Each class below answered 500 before (issue #22).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lookout import errors, jsonin
from lookout.agent import cadence, router
from lookout.chat import stream_ids
from lookout.watches import schedule

LIMIT = sys.get_int_max_str_digits()
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)

# -- the body decoder --------------------------------------------------------------------------

finite_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip
digits = st.integers(min_value=1, max_value=3 * LIMIT).map(lambda n: "9" * n)
hostile_numbers = st.one_of(
    digits, digits.map("-{}".format), st.sampled_from(["NaN", "Infinity", "-Infinity"]),
    st.integers(min_value=309, max_value=100_000).map("1e{}".format),
    st.integers(min_value=310, max_value=5000).map(lambda n: "1" + "0" * n + ".5"),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
@example(b"\xff\xfe{}")
@example(b'{"a":' * 200_000)
def test_any_bytes_decode_or_are_not_json(raw: bytes) -> None:
    try:
        jsonin.loads(raw)
    except jsonin.NotJson as exc:
        assert exc.code == "invalid_input" and exc.status == 400


@settings(max_examples=200, deadline=None)
@given(finite_json)
def test_finite_json_reads_back_as_itself(value: Any) -> None:
    assert jsonin.loads(json.dumps(value)) == value


@settings(max_examples=200, deadline=None)
@given(hostile_numbers, st.sampled_from(['{{"email": {}}}', "[{}]", '{{"a": [1, {{"b": {}}}]}}']))
@example("9" * 5000, '{{"email": {}}}')
def test_numbers_json_or_python_cannot_hold_are_invalid_input(number: str, shape: str) -> None:
    raw = shape.format(number).encode()
    fits = number.lstrip("-").isdigit() and len(number.lstrip("-")) <= LIMIT
    if fits:
        assert jsonin.loads(raw) is not None
        return
    with pytest.raises(jsonin.NotJson) as caught:
        jsonin.loads(raw)
    assert caught.value.code == "invalid_input"


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=200_000), st.sampled_from(["[]", "{}"]))
def test_any_depth_is_a_document_or_not_json(depth: int, pair: str) -> None:
    opened = pair[0] if pair == "[]" else '{"a":'
    raw = (opened * depth + ("1" if pair == "{}" else "") + pair[1] * depth).encode()
    try:
        jsonin.loads(raw)
    except jsonin.NotJson:
        assert depth > 100  # the interpreter's stack holds far more than that


@given(st.sampled_from(["\u0000", "a\u0000b", "\ud800", "\udfff"]))
def test_text_postgres_cannot_store_is_named(text: str) -> None:
    with pytest.raises(jsonin.Unstorable) as caught:
        jsonin.decode(json.dumps({"messages": [{"text": text}]}))
    assert "messages.0.text" in caught.value.details["fields"]


# -- the cadence parser ------------------------------------------------------------------------

units = st.sampled_from(["seconds", "minutes", "min", "hours", "h", "days", "weeks", "months",
                         "years", "fortnights"])  # fmt: skip
huge = st.one_of(
    st.integers(min_value=0, max_value=10**7).map(str),
    st.integers(min_value=1, max_value=6000).map(lambda n: "9" * n),
    st.builds("{}.{}".format, st.integers(0, 10**6), st.integers(1, 500).map(lambda n: "9" * n)),
    st.integers(min_value=1, max_value=400).map(lambda n: "0" * n + "5"),
)
phrases = st.one_of(
    st.builds("watch example.com every {} {}".format, huge, units),
    st.builds("check it {} times a {}".format, huge, st.sampled_from(["day", "week", "hour",
                                                                     "month", "year"])),
    st.builds("keep an eye on it at {} {} intervals".format, huge, units),
    st.builds("track example.org {}x daily at {}:{} pm".format, huge, huge, huge),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(phrases, st.integers(min_value=1, max_value=1440))
@example("watch example.com every " + "9" * 320 + " minutes", 5)
@example("check it " + "9" * 5000 + " times a day", 5)
def test_any_number_in_a_schedule_reads_as_a_cron_that_fires_within_a_year(
    text: str, minimum: int
) -> None:
    found = cadence.find(text, now=NOW, min_interval=minimum)
    routed = router.route(text, now=NOW, min_interval_minutes=minimum)
    for cron in {found.cron if found else None, routed.cadence} - {None}:
        assert cron is not None
        schedule.validate(cron, "UTC", min_minutes=minimum, now=NOW)  # what a watch accepts
    if found is not None:  # none only for a count of 0 ("0 times a day")
        assert minimum <= found.period_min <= 366 * 24 * 60


cron_field = st.one_of(
    st.sampled_from(["*", "*/5", "1-5", "0", "29", "30", "31", "2", "12", "13", "99", "L"]),
    st.integers(min_value=0, max_value=10**6).map(str),
)
crons = st.builds(" ".join, st.lists(cron_field, min_size=5, max_size=5))


@settings(max_examples=400, deadline=None)
@given(crons)
@example("0 0 30 2 *")
@example("0 0 29 2 *")
@example("0 0 31 4,6,9,11 *")
def test_a_cron_is_accepted_only_with_a_fire_within_every_year(cron: str) -> None:
    try:
        schedule.validate(cron, "UTC", min_minutes=5, now=NOW)
    except errors.InvalidInput as exc:
        assert exc.status == 400
        return
    sample = schedule.fires(cron, "UTC", NOW, schedule.SAMPLE_FIRES)
    assert sample[0] - NOW <= dt.timedelta(days=366)
    assert all(b - a <= dt.timedelta(days=366) for a, b in itertools.pairwise(sample))


@pytest.mark.parametrize("cron", ["0 0 30 2 *", "0 0 29 2 *", "0 0 31 2,4 *"])
def test_impossible_and_leap_day_crons_are_refused_naming_the_cadence(cron: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        schedule.validate(cron, "UTC", min_minutes=5, now=NOW)
    assert caught.value.details["fields"] == {"cadence": ["no fire within a year"]}


# -- the stream-id parser ----------------------------------------------------------------------

parts_in_range = st.integers(min_value=0, max_value=stream_ids.MAX_PART)
ids_in_range = st.tuples(parts_in_range, parts_in_range).filter(
    lambda key: key != (stream_ids.MAX_PART, stream_ids.MAX_PART)
)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60) | st.from_regex(r"\A[0-9\u0660-\u0669\u00b2]{1,25}-[0-9]{1,25}\Z"))
@example("99999999999999999999-1")
@example("18446744073709551615-18446744073709551615")
@example("\u0661-\u0661")
@example("\u00b2-1")
def test_any_text_is_an_id_in_redis_range_or_none(text: str) -> None:
    key = stream_ids.parse(text)
    if key is None:
        assert stream_ids.valid(text) is None
        return
    assert all(0 <= part <= stream_ids.MAX_PART for part in key)
    assert key != (stream_ids.MAX_PART, stream_ids.MAX_PART)
    assert text.isascii() and stream_ids.valid(text) == f"{key[0]}-{key[1]}"


@settings(max_examples=300, deadline=None)
@given(ids_in_range)
def test_every_id_in_range_reads_back_and_has_a_smaller_predecessor(key: tuple[int, int]) -> None:
    text = f"{key[0]}-{key[1]}"
    assert stream_ids.valid(text) == text and stream_ids.key(text) == key
    before = stream_ids.previous(text)
    assert stream_ids.parse(before) is not None
    assert stream_ids.key(before) < key or key == (0, 0)


@given(st.integers(min_value=stream_ids.MAX_PART + 1, max_value=10**40), parts_in_range)
def test_a_part_past_64_bits_is_refused(big: int, other: int) -> None:
    assert stream_ids.valid(f"{big}-{other}") is None
    assert stream_ids.valid(f"{other}-{big}") is None
