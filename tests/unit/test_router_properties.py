"""Properties of the router: it never raises, URL extraction is a fixed point, every cron holds."""

from __future__ import annotations

import itertools
import json
import string
from datetime import UTC, datetime, timedelta

from croniter import croniter
from hypothesis import given, settings
from hypothesis import strategies as st

from lookout.agent import router, urls

_VOCABULARY = (
    "watch track monitor keep an eye on notify me when let know if stop cancel pause run it now "
    "check again refresh every each daily hourly weekly nightly monthly twice once a day week "
    "hour minute minutes hours days weeks months morning evening night at 8 9:30 pm am noon "
    "on mondays weekdays weekend friday and, no, not just right now today summarize compare "
    "find near in the of for changes other half few 0 1 2 3 5 7 10 45 90 1000 evry dayly "
    "moniter https://example.com example.org/a (www.example.net). <http://x.io/p?q=1> \u2026 ?"
)
WORDS = _VOCABULARY.split()
messages = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(WORDS), max_size=24).map(" ".join),
    st.lists(st.sampled_from(WORDS) | st.text(max_size=6), max_size=16).map("".join),
)
moments = st.none() | st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.none() | st.just(UTC),
)


@settings(max_examples=400, deadline=None)
@given(messages, st.integers(min_value=-5, max_value=2000), moments)
def test_route_never_raises_and_always_answers_in_shape(
    text: str, minimum: int, now: datetime | None
) -> None:
    found = router.route(text, now=now, min_interval_minutes=minimum)
    assert found.intent in ("one_shot", "standing", "ambiguous", "control")
    # A cadence belongs to a standing request, or to an edit of the watch ("hourly instead").
    has_cadence = found.intent == "standing" or found.control == "edit_watch"
    assert found.cadence is None or has_cadence
    assert found.intent != "standing" or found.cadence is not None
    assert (found.control is not None) == (found.intent == "control")
    assert found.urls == urls.extract(text)
    json.dumps(found.to_dict())


_label = st.text(
    alphabet=string.ascii_letters + string.digits + "äöüßéкиря日本",
    min_size=1,
    max_size=10,
)
_host = st.builds(
    lambda labels, tld: ".".join([*labels, tld]),
    st.lists(_label, min_size=1, max_size=3),
    st.sampled_from(["com", "org", "io", "de", "co.uk", "jp", "рф", "xn--p1ai", "shop"]),
)
_path = st.lists(
    st.text(alphabet=string.ascii_letters + string.digits + "-_.~%()=&?#äß日", max_size=8),
    max_size=3,
).map(lambda parts: "/".join(["", *parts]) if parts else "")
url_like = st.builds(
    lambda lead, scheme, host, path, tail: f"{lead}{scheme}{host}{path}{tail}",
    st.sampled_from(["", "(", "<", '"', "see ", "[x]("]),
    st.sampled_from(["", "http://", "https://", "HTTPS://", "www.", "https://WWW."]),
    _host,
    _path,
    st.sampled_from(["", ".", ",", ")", "!", "?", "'s", "\u2026", "\u3002", ">", '"', ":"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(url_like, max_size=3), st.sampled_from([" ", " and ", ", ", "\n", " vs. "]))
def test_url_extraction_is_idempotent(pieces: list[str], glue: str) -> None:
    first = urls.extract(glue.join(pieces))
    assert urls.extract(" ".join(first)) == first
    assert len(set(first)) == len(first)
    for url in first:
        assert url.startswith(("http://", "https://"))
        assert urls.normalize(url) == url


_units = ["seconds", "minute", "minutes", "min", "hours", "hr", "days", "day", "weeks", "months"]
cadence_phrases = st.one_of(
    st.builds("every {} {}".format, st.integers(1, 400), st.sampled_from(_units)),
    st.builds(
        "{} times a {}".format,
        st.integers(1, 30),
        st.sampled_from(["hour", "day", "week", "month"]),
    ),
    st.builds(
        "every {} at {}{}".format,
        st.sampled_from(["monday", "weekday", "morning", "evening", "night", "day", "sunday"]),
        st.integers(0, 30),
        st.sampled_from(["", "am", "pm", ":45", ":30 pm"]),
    ),
    st.sampled_from(
        [
            *("hourly", "daily", "nightly", "weekly", "fortnightly", "monthly", "quarterly"),
            *(
                "yearly",
                "twice a day",
                "every other day",
                "every half hour",
                "on weekends",
                "every other monday",
            ),
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(cadence_phrases, st.integers(min_value=1, max_value=1440), moments)
def test_every_cron_parses_and_never_runs_closer_than_the_minimum(
    phrase: str, minimum: int, now: datetime | None
) -> None:
    found = router.route(
        f"watch https://example.com {phrase}", now=now, min_interval_minutes=minimum
    )
    assert found.intent == "standing" and found.cadence is not None
    assert croniter.is_valid(found.cadence)
    runs = croniter(found.cadence, datetime(2025, 1, 1, tzinfo=UTC))
    times = [runs.get_next(datetime) for _ in range(40)]
    gaps = [
        (later - earlier) / timedelta(minutes=1) for earlier, later in itertools.pairwise(times)
    ]
    assert min(gaps) >= minimum
    assert min(gaps) == found.period_min
