"""The providers' pure parts: the pacer, the cache, request building, parsing, and the inputs."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

import lookout.capabilities  # noqa: F401 - registers the verbs
from lookout import errors
from lookout.capabilities import registry
from lookout.capabilities.providers import api, cache, limiter, nominatim
from lookout.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _settings(**overrides: Any) -> Settings:
    environ = {
        "DATABASE_URL": "x",
        "REDIS_URL": "x",
        "LOOKOUT_SECRET_KEY": "x" * 32,
        "LOOKOUT_PUBLIC_URL": "https://lookout.example",
    }
    return Settings.from_env(environ, **overrides)


def test_callers_at_once_are_given_slots_one_interval_apart() -> None:
    clock = Clock()
    pace = limiter.Limiter(1.0, clock=clock)
    assert [pace.reserve() for _ in range(4)] == [0.0, 1.0, 2.0, 3.0]


def test_a_caller_after_a_quiet_spell_does_not_wait() -> None:
    clock = Clock()
    pace = limiter.Limiter(1.0, clock=clock)
    pace.reserve()
    clock.now += 0.25
    assert pace.reserve() == 0.75
    clock.now += 10
    assert pace.reserve() == 0.0


def test_the_cache_forgets_after_its_ttl() -> None:
    clock = Clock()
    kept: cache.TTLCache[str] = cache.TTLCache(max_entries=10, clock=clock)
    kept.put("a", "answer", 60)
    clock.now += 59
    assert kept.get("a") == "answer"
    clock.now += 1
    assert kept.get("a") is None and len(kept) == 0


def test_the_cache_keeps_at_most_its_bound_dropping_the_least_recently_used() -> None:
    kept: cache.TTLCache[int] = cache.TTLCache(max_entries=2, clock=Clock())
    kept.put("a", 1, 60)
    kept.put("b", 2, 60)
    assert kept.get("a") == 1  # a is now the most recently used
    kept.put("c", 3, 60)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)


def test_a_zero_ttl_caches_nothing() -> None:
    kept: cache.TTLCache[int] = cache.TTLCache(max_entries=2, clock=Clock())
    kept.put("a", 1, 0)
    assert kept.get("a") is None


@pytest.mark.parametrize(
    ("url", "flag", "public"),
    [
        ("https://nominatim.openstreetmap.org", False, True),
        ("https://NOMINATIM.openstreetmap.org/", False, True),
        ("https://nominatim.example.org", False, False),
        ("http://127.0.0.1:8080", True, True),
    ],
)
def test_which_instance_is_held_to_the_public_usage_policy(
    url: str, flag: bool, public: bool
) -> None:
    settings = _settings(nominatim_url=url, nominatim_public=flag)
    assert nominatim.is_public(settings) is public


def test_the_viewbox_holds_the_circle() -> None:
    left, top, right, bottom = nominatim.viewbox(60.0, 10.0, 1000)
    # At 60° north a degree of longitude is half as long as one of latitude.
    assert (right - left) == pytest.approx(2 * (top - bottom), rel=1e-6)
    assert (top - bottom) * nominatim.METRES_PER_DEGREE == pytest.approx(2000)


def test_the_viewbox_stays_on_the_globe_at_the_pole() -> None:
    left, top, right, bottom = nominatim.viewbox(89.99, 179.9, 50_000)
    assert -180 <= left < right <= 180 and -90 <= bottom < top <= 90


def test_near_becomes_part_of_the_free_text_query() -> None:
    data = {"query": "bakery", "near": "Lyon", "limit": 5}
    assert ("q", "bakery, Lyon") in nominatim.query_params(data)


@pytest.mark.parametrize(
    "record",
    [
        {"osm_type": "node", "osm_id": 1, "lat": "x", "lon": "1"},
        {"osm_type": "area", "osm_id": 1, "lat": "1", "lon": "1"},
        {"osm_type": "node", "osm_id": "1", "lat": "1", "lon": "1"},
        {"osm_type": "node", "osm_id": 1, "lat": "nan", "lon": "1"},
        ["not", "a", "record"],
    ],
)
def test_records_too_broken_to_use_are_skipped(record: Any) -> None:
    assert nominatim.to_place(record) is None


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7),
        (None, api.DEFAULT_RETRY_AFTER_S),
        ("soon", api.DEFAULT_RETRY_AFTER_S),
        ("0", 1),
        ("999999", api.MAX_RETRY_AFTER_S),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 120),
    ],
)
def test_retry_after_is_read_as_seconds_or_a_date(header: str | None, seconds: int) -> None:
    now = datetime.datetime(2015, 10, 21, 7, 26, tzinfo=datetime.UTC)
    assert api.retry_after(header, now=now) == seconds


def _invalid(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(errors.InvalidInput) as caught:
        registry.validate_input(registry.get(name), raw)
    fields: dict[str, Any] = caught.value.details["fields"]
    return fields


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"query": "x", "limit": 51}, "limit"),
        ({"query": "x", "lat": 52.5}, "lon"),
        ({"query": "x", "lon": 13.4}, "lat"),
        ({"query": "x", "near": "Berlin", "lat": 52.5, "lon": 13.4}, "near"),
        ({"query": "x", "radius_m": 500}, "radius_m"),
        ({"query": "x", "lat": 52.5, "lon": 13.4, "radius_m": 50_001}, "radius_m"),
        ({"query": "x", "lat": 91, "lon": 13.4}, "lat"),
        ({"query": ""}, "query"),
        ({}, "query"),
        ({"query": "x", "provider": "bing"}, "provider"),
    ],
)
def test_maps_search_bounds(raw: dict[str, Any], field: str) -> None:
    assert field in _invalid("maps.search", raw)


def test_lat_lon_without_a_radius_search_five_kilometres_around() -> None:
    data = registry.validate_input(
        registry.get("maps.search"), {"query": "x", "lat": 52.5, "lon": 13.4}
    )
    assert data == {"query": "x", "lat": 52.5, "lon": 13.4, "radius_m": 5000, "limit": 10}


@pytest.mark.parametrize(
    "ref", ["N123", "yelp:abc", "google:", "google:has space", "google:" + "a" * 301]
)
def test_a_place_ref_not_from_maps_search_is_invalid(ref: str) -> None:
    assert "place_ref" in _invalid("maps.reviews", {"place_ref": ref})


def test_maps_reviews_bounds_its_limit() -> None:
    assert "limit" in _invalid("maps.reviews", {"place_ref": "google:abc", "limit": 51})


@pytest.mark.parametrize("name", ["maps.search", "maps.reviews"])
def test_maps_verbs_cost_one_credit_per_call(name: str) -> None:
    verb = registry.get(name)
    assert verb.price * verb.max_units({}) == 1
    assert verb.price * verb.billable_units({}) == 1
    assert not verb.is_slow({}) and verb.read_only
