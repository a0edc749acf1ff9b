"""The maps verbs, registered: maps.search (places near somewhere) and maps.reviews.

Google Places serves both when LOOKOUT_GOOGLE_PLACES_KEY is set; otherwise Nominatim serves
maps.search and nothing serves reviews (OpenStreetMap has none).
"""

from __future__ import annotations

from typing import Any

from lookout import errors
from lookout.capabilities import registry
from lookout.capabilities.providers import api, google, nominatim
from lookout.schema import maps as schema

_NO_REVIEWS = (
    "Reviews need a provider that has them: set LOOKOUT_GOOGLE_PLACES_KEY to a Google Places "
    "API (New) key. OpenStreetMap (Nominatim) has no reviews."
)


async def search(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    """{"places": [...]} from Google Places if configured, else Nominatim."""
    settings = ctx.settings
    if google.configured(settings):
        async with api.session(ctx.http, settings, settings.google_places_url) as http:
            return {"places": await google.search(data, settings, http)}
    if not settings.nominatim_url:
        raise errors.ProviderNotConfigured(
            "Place search needs a provider: set LOOKOUT_NOMINATIM_URL (a Nominatim instance) or "
            "LOOKOUT_GOOGLE_PLACES_KEY."
        )
    async with api.session(ctx.http, settings, settings.nominatim_url) as http:
        return {"places": await nominatim.search(data, settings, http, ctx.redis)}


async def reviews(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    """{"place", "reviews"} for a place_ref from maps.search."""
    settings = ctx.settings
    provider, _, ref = data["place_ref"].partition(":")
    if not google.configured(settings):
        raise errors.ProviderNotConfigured(_NO_REVIEWS, setting="LOOKOUT_GOOGLE_PLACES_KEY")
    if provider != "google":
        problem = (
            f"This place came from {provider}, which has no reviews; run maps.search again "
            "for a Google Places place_ref."
        )
        raise errors.InvalidInput(problem, fields={"place_ref": [problem]})
    async with api.session(ctx.http, settings, settings.google_places_url) as http:
        return await google.details(ref, data["limit"], settings, http)


def _one_call(_: dict[str, Any]) -> int:
    return 1


def _places(ask: registry.Ask) -> dict[str, Any]:
    """maps.search's input for PLACES."""
    data: dict[str, Any] = {"query": ask.query}
    if ask.limit is not None:
        data["limit"] = ask.limit
    if ask.near:
        data["near"] = ask.near
    return data


def _reviews(ask: registry.Ask) -> dict[str, Any]:
    """maps.reviews' input for REVIEWS."""
    return {"place_ref": ask.ref} | ({} if ask.limit is None else {"limit": ask.limit})


SEARCH = registry.register(
    registry.Verb(
        name="maps.search",
        title="Search places on a map",
        description=(
            "Find places (shops, restaurants, museums, addresses…) matching query, near a place "
            "named in words (near) or around lat/lon within radius_m. Each result has a name, "
            "address, coordinates, category, a link to the map, a rating and its count when the "
            "provider has them, and a place_ref to pass to maps.reviews. Use it for questions "
            "about places in the physical world; use web.discover to find web pages. "
            "1 credit per call."
        ),
        input_schema=schema.MapsSearchInputSchema,
        output_schema=schema.MapsSearchOutputSchema,
        execute=search,
        price=1,
        max_units=_one_call,
        billable_units=_one_call,
        slow=False,
        reads_as="places",
        serves=frozenset({registry.PLACES}),
        fill=_places,
    )
)

REVIEWS = registry.register(
    registry.Verb(
        name="maps.reviews",
        title="Read a place's reviews",
        description=(
            "The reviews of one place: who wrote each, its rating, text, language and date, "
            "with the place itself. Pass a place_ref from maps.search. Needs a provider that has "
            "reviews (Google Places); the provider returns at most 5, its most relevant. "
            "1 credit per call."
        ),
        input_schema=schema.MapsReviewsInputSchema,
        output_schema=schema.MapsReviewsOutputSchema,
        execute=reviews,
        price=1,
        max_units=_one_call,
        billable_units=_one_call,
        slow=False,
        reads_as="reviews",
        serves=frozenset({registry.REVIEWS}),
        fill=_reviews,
    )
)
