"""maps.search and maps.reviews through Google Places (New): mapping, paging, the place_ref
round trip, and what a client sees when Google refuses."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from lookout import errors
from lookout.agent import changes, results
from lookout.capabilities.providers import google
from lookout.settings import Settings
from tests.integration import providers
from tests.integration.providers import FakeNominatim, FakePlaces, ServerFactory
from tests.integration.webpages import loopback_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("loopback_only")


@pytest.fixture
async def places(aiohttp_server: ServerFactory) -> FakePlaces:
    fake = FakePlaces()
    await providers.serve(fake, aiohttp_server)
    return fake


def _settings(places: FakePlaces, key: str = providers.GOOGLE_KEY, **more: Any) -> Settings:
    return providers.settings(google_places_url=places.url, google_places_key=key, **more)


async def _search(places: FakePlaces, raw: dict[str, Any], **more: Any) -> list[Any]:
    output = await providers.run("maps.search", raw, _settings(places, **more))
    found: list[Any] = output["places"]
    return found


async def _reviews(places: FakePlaces, raw: dict[str, Any], **more: Any) -> dict[str, Any]:
    return await providers.run("maps.reviews", raw, _settings(places, **more))


async def test_a_key_switches_search_to_google_with_every_field_mapped(
    places: FakePlaces, aiohttp_server: ServerFactory
) -> None:
    osm = FakeNominatim()
    await providers.serve(osm, aiohttp_server)

    found = await _search(places, {"query": "dumplings", "near": "Sydney"}, nominatim_url=osm.url)

    assert found[0] == {
        "place_ref": "google:ChIJs5ydyTiuEmsR0fRSlU0C7k000",
        "name": "Spice Temple 0",
        "address": "0 Bligh St, Sydney NSW 2000, Australia",
        "lat": -33.8651,
        "lon": 151.2113,
        "category": "Chinese Restaurant",
        "rating": 4.4,
        "reviews_count": 1200,
        "url": "https://maps.google.com/?cid=1000000",
        "provider": "google",
    }
    assert len(found) == 3 and osm.requests == []
    sent = places.requests[0]
    assert sent.method == "POST" and sent.headers["X-Goog-Api-Key"] == providers.GOOGLE_KEY
    assert "reviews" not in sent.headers["X-Goog-FieldMask"]  # billed by field: not asked
    assert places.bodies[0] == {"textQuery": "dumplings in Sydney", "maxResultCount": 10}


async def test_lat_lon_and_radius_become_a_location_bias_circle(places: FakePlaces) -> None:
    await _search(places, {"query": "ramen", "lat": -33.87, "lon": 151.21, "radius_m": 800})

    assert places.bodies[0]["locationBias"] == {
        "circle": {"center": {"latitude": -33.87, "longitude": 151.21}, "radius": 800.0}
    }


@pytest.mark.parametrize(("limit", "pages"), [(2, 1), (20, 1), (25, 2), (45, 3)])
async def test_results_page_by_page_up_to_the_limit(
    places: FakePlaces, limit: int, pages: int
) -> None:
    places.places = [providers.google_place(index) for index in range(60)]

    found = await _search(places, {"query": "ramen", "limit": limit})

    assert [place["name"] for place in found] == [f"Spice Temple {n}" for n in range(limit)]
    assert len(places.requests) == pages
    if pages > 1:
        # Google wants the same request again, plus the token.
        assert places.bodies[1] == {**places.bodies[0], "pageToken": "20"}


async def test_a_place_ref_from_search_reads_that_places_reviews(places: FakePlaces) -> None:
    chosen = (await _search(places, {"query": "dumplings"}))[1]

    output = await _reviews(places, {"place_ref": chosen["place_ref"], "limit": 3})

    assert output["place"] == chosen
    assert places.requests[-1].path == "/v1/places/ChIJs5ydyTiuEmsR0fRSlU0C7k001"
    assert len(output["reviews"]) == 3
    assert output["reviews"][0] == {
        "author": "Reviewer 0",
        "rating": 5.0,
        "text": "Review 0: the dumplings were excellent.\nWould come back.",
        "published_at": "2024-03-10T02:31:43.416935+00:00",
        "language": "en",
    }
    published = datetime.datetime.fromisoformat(output["reviews"][2]["published_at"])
    assert published.tzinfo is not None


async def test_reviews_of_a_place_google_does_not_know_is_not_found(places: FakePlaces) -> None:
    with pytest.raises(errors.NotFound, match="search again"):
        await _reviews(places, {"place_ref": "google:ChIJgone"})


async def test_a_nominatim_place_ref_cannot_have_google_reviews(places: FakePlaces) -> None:
    with pytest.raises(errors.InvalidInput, match=r"maps\.search again") as caught:
        await _reviews(places, {"place_ref": "nominatim:N2466789001"})
    assert "place_ref" in caught.value.details["fields"]
    assert places.requests == []


async def test_a_refused_key_says_which_setting_to_check(places: FakePlaces) -> None:
    with pytest.raises(errors.UpstreamError, match="LOOKOUT_GOOGLE_PLACES_KEY") as caught:
        await _search(places, {"query": "ramen"}, key="wrong-key")
    assert "API key not valid" in caught.value.message


async def test_their_429_without_retry_after_waits_a_default_that_is_said(
    places: FakePlaces,
) -> None:
    places.fail_with(429, '{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}')
    with pytest.raises(errors.RateLimited) as caught:
        await _search(places, {"query": "ramen"})
    assert caught.value.retry_after == 30
    assert "30 s" in caught.value.message


async def test_their_429_on_reviews_passes_their_retry_after(places: FakePlaces) -> None:
    places.fail_with(429, "{}", headers={"Retry-After": "12"})
    with pytest.raises(errors.RateLimited) as caught:
        await _reviews(places, {"place_ref": "google:ChIJs5ydyTiuEmsR0fRSlU0C7k000"})
    assert caught.value.retry_after == 12


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, '{"error": {"code": 500, "message": "Internal error encountered."}}'),
        (503, '{"error": {"code": 503, "message": "The service is currently unavailable."}}'),
        (200, '["not", "an", "object"]'),
        (200, "{not json"),
    ],
)
async def test_google_failures_are_upstream_errors_not_500s(
    places: FakePlaces, status: int, body: str
) -> None:
    places.fail_with(status, body)
    with pytest.raises(errors.UpstreamError, match="Google Places") as caught:
        await _search(places, {"query": "ramen"})
    assert caught.value.status == 502


async def test_places_without_an_id_or_location_are_left_out(places: FakePlaces) -> None:
    broken = '{"places": [{"id": "no-location"}, {"displayName": {"text": "no id"}}]}'
    places.fail_with(200, broken)
    assert await _search(places, {"query": "ramen"}) == []


async def test_a_broken_details_answer_is_an_upstream_error(places: FakePlaces) -> None:
    places.fail_with(200, '{"displayName": {"text": "no id, no location"}}')
    with pytest.raises(errors.UpstreamError, match="without an id or location"):
        await _reviews(places, {"place_ref": "google:ChIJs5ydyTiuEmsR0fRSlU0C7k000"})


def test_the_field_masks_ask_for_every_field_we_map() -> None:
    for hours_and_prices in (False, True):
        settings = providers.settings(maps_hours_and_prices=hours_and_prices)
        masked = {
            field.removeprefix("places.") for field in google.search_mask(settings).split(",")
        }
        trimmed = {k: v for k, v in providers.google_place(7).items() if k in masked}
        mapped = google.to_place(trimmed)
        assert mapped is not None and None not in mapped.values()
        assert ("opening_hours" in mapped and "price_level" in mapped) is hours_and_prices
        assert set(trimmed) >= set(masked) - {"nextPageToken"}  # the fake has every field


async def test_opening_hours_and_price_level_are_asked_for_only_when_the_setting_says_so(
    places: FakePlaces,
) -> None:
    off = await _search(places, {"query": "dumplings"})
    on = await _search(places, {"query": "dumplings"}, maps_hours_and_prices=True)
    reviewed = await _reviews(places, {"place_ref": on[0]["place_ref"]}, maps_hours_and_prices=True)

    assert "opening_hours" not in off[0] and "price_level" not in off[0]
    assert "regularOpeningHours" not in places.requests[0].headers["X-Goog-FieldMask"]
    week = "Mon 09:00\u201318:00, Tue 09:00\u201318:00, Wed 09:00\u201318:00, "
    week += "Thu 09:00\u201318:00, Fri 09:00\u201318:00, Sat closed, Sun closed"
    assert on[0]["opening_hours"] == week and on[0]["price_level"] == "moderate"
    for sent in places.requests[1:]:
        assert {"regularOpeningHours", "priceLevel"} <= {
            field.removeprefix("places.") for field in sent.headers["X-Goog-FieldMask"].split(",")
        }
    assert reviewed["place"]["opening_hours"] == week


async def test_a_maps_watch_says_which_opening_hours_and_price_level_changed(
    places: FakePlaces,
) -> None:
    """Given a maps search seen once, when the place opens an hour later on Mondays, shuts on
    Fridays and gets dearer, then the next look says so field by field."""
    asked = {"query": "dumplings", "near": "Sydney"}
    pages: dict[str, Any] = {}
    first = await _search(places, asked, maps_hours_and_prices=True)
    changes.track(pages, "k", results.entry("maps.search", {"places": first}), at="t0",
                  title="k", scheduled=True)  # fmt: skip
    days = {day: ((9, 0), (18, 0)) for day in range(1, 5)} | {1: ((10, 0), (18, 0))}
    places.places[0]["regularOpeningHours"] = providers.opening_hours(days)
    places.places[0]["priceLevel"] = "PRICE_LEVEL_EXPENSIVE"

    second = await _search(places, asked, maps_hours_and_prices=True)
    looked = changes.track(pages, "k", results.entry("maps.search", {"places": second}),
                           at="t1", title="k", scheduled=True)  # fmt: skip

    assert looked is not None and changes.data(looked)["counts"]["modified"] == 1
    said = changes.describe(looked)
    assert (
        "~ Spice Temple 0: opening hours changed: Mon 09:00\u201318:00 \u2192 10:00\u201318:00; "
        "Fri 09:00\u201318:00 \u2192 closed; price level changed: moderate \u2192 expensive" in said
    )


@pytest.mark.parametrize(
    ("hours", "price"),
    [
        ([], ["PRICE_LEVEL_MODERATE"]),
        ({"periods": [1, None, {"open": {"day": 9}}, {"open": "x", "close": []}]}, {"a": 1}),
        ({"periods": "Mon 9-5"}, "PRICE_LEVEL_UNKNOWN_TIER"),
    ],
)
async def test_odd_opening_hours_or_price_levels_are_left_out(
    places: FakePlaces, hours: Any, price: Any
) -> None:
    places.places[0]["regularOpeningHours"], places.places[0]["priceLevel"] = hours, price

    found = await _search(places, {"query": "dumplings"}, maps_hours_and_prices=True)

    assert "price_level" not in found[0] and "opening_hours" not in found[0]
    assert found[1]["price_level"] == "moderate"
