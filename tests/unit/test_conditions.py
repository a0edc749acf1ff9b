"""Conditions judged run after run, the subject read off a page, structured data (pure)."""

from __future__ import annotations

import zoneinfo
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lookout.agent import conditions, router, subject, wants
from lookout.capabilities import extract, structured

BELOW_50 = {"kind": "below", "value": 50.0, "text": None, "unit": "EUR"}


def priced(price: float | None, markdown: str = "") -> dict[str, Any]:
    data = (
        None
        if price is None
        else {
            "price": price,
            "currency": "EUR",
            "name": "Kettle",
            "availability": None,
            "source": "json-ld",
        }
    )
    return {"url": "https://shop.example/kettle", "markdown": markdown, "data": data}


def run_all(condition: dict[str, Any], pages: list[dict[str, Any]]) -> list[conditions.Outcome]:
    memory: dict[str, Any] | None = None
    out = []
    for page in pages:
        outcome = conditions.evaluate(
            condition, subject.read(condition, page, "the kettle"), memory
        )
        memory = outcome.memory
        out.append(outcome)
    return out


def test_a_threshold_notifies_once_when_it_becomes_true_and_again_only_after_false() -> None:
    outcomes = run_all(BELOW_50, [priced(p) for p in (59, 57, 45, 44, 62, 48)])
    assert [o.met for o in outcomes] == [False, False, True, True, False, True]
    assert [o.notify for o in outcomes] == [False, False, True, False, False, True]
    assert outcomes[2].sentence == "Now 45 € (was 57 €): the price is below 50 €."
    assert (
        outcomes[1].sentence == "Now 57 € (was 59 €); I'll tell you when the price is below 50 €."
    )
    assert (outcomes[5].value, outcomes[5].previous) == (48.0, 62.0)


def test_three_unreadable_runs_in_a_row_notify_once_then_reading_again_resets() -> None:
    pages = [priced(55), priced(None), priced(None), priced(None), priced(None), priced(45)]
    outcomes = run_all(BELOW_50, pages)
    assert [o.met for o in outcomes] == [False, None, None, None, None, True]
    assert [o.notify for o in outcomes] == [False, False, False, True, False, True]
    assert outcomes[3].sentence == "I can no longer find the price on this page."
    assert "couldn't find the price" in outcomes[1].sentence


def test_a_changed_condition_starts_afresh() -> None:
    [first] = run_all(BELOW_50, [priced(45)])
    other = {**BELOW_50, "value": 40.0}
    again = conditions.evaluate(other, subject.read(other, priced(39), ""), first.memory)
    assert again.notify and again.previous is None


def test_new_items_notify_for_each_new_one_never_on_the_baseline() -> None:
    condition = {"kind": "new_items", "value": None, "text": "jobs", "unit": None}
    pages = [
        {"markdown": md}
        for md in (
            "- Engineer\n- Designer",
            "- Engineer\n- Designer",
            "- Engineer\n- Designer\n- Intern",
            "- Intern",
        )
    ]
    outcomes = run_all(condition, pages)
    assert [o.notify for o in outcomes] == [False, False, True, False]
    assert outcomes[2].value == ["Intern"] and outcomes[2].sentence == "New: Intern."


def test_changes_by_compares_with_the_value_last_reported() -> None:
    condition = {"kind": "changes_by", "value": 10.0, "text": None, "unit": "%"}
    outcomes = run_all(condition, [priced(p) for p in (100, 105, 111, 115, 99)])
    assert [o.notify for o in outcomes] == [False, False, True, False, True]


def test_mentions_absent_and_stock_from_phrases() -> None:
    mentions = {"kind": "mentions", "value": None, "text": "summer internship", "unit": None}
    absent = {**mentions, "kind": "absent"}
    stock = {"kind": "in_stock", "value": None, "text": None, "unit": None}
    pages = [{"markdown": "Sold out"}, {"markdown": "Summer  Internship open. Add to cart"}]
    assert [o.notify for o in run_all(mentions, pages)] == [False, True]
    assert [o.met for o in run_all(absent, pages)] == [True, False]
    assert [o.notify for o in run_all(stock, pages)] == [False, True]
    assert not subject.read(stock, {"markdown": "A lamp"}, "").found


def test_the_currency_amount_nearest_to_the_request_words() -> None:
    page = {
        "markdown": "Free delivery from 30 €\n\n## Stovetop kettle\nNow 45,90 € (was 59 €)\n"
        "Teapot 12 €"
    }
    found = subject.read(BELOW_50, page, "tell me when the stovetop kettle drops below 50 euros")
    assert (found.value, found.unit, found.source) == (45.9, "EUR", "page text")
    dollars = {**BELOW_50, "unit": "USD"}
    assert not subject.read(dollars, page, "kettle").found


def test_a_number_next_to_the_named_subject() -> None:
    rating = {"kind": "below", "value": 4.2, "text": "rating", "unit": None}
    page = {"markdown": "Downloads: 10,500\nRating: 4.6 of 5 (1,203 reviews)"}
    assert subject.read(rating, page, "").value == 4.6
    downloads = {"kind": "above", "value": 1e4, "text": "downloads", "unit": None}
    assert subject.read(downloads, page, "").value == 10500


def test_structured_data_from_json_ld_microdata_and_meta() -> None:
    ld = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":'
        '"Product","name":"Kettle","offers":{"@type":"Offer","price":"59.00","priceCurrency":'
        '"EUR","availability":"https://schema.org/OutOfStock"}}]}</script>'
    )
    micro = (
        '<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Lamp</span>'
        '<div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span '
        'itemprop="price" content="19.5">19,50 €</span><meta itemprop="priceCurrency" '
        'content="EUR"><link itemprop="availability" href="https://schema.org/InStock">'
        "</div></div>"
    )
    meta = (
        '<meta property="product:price:amount" content="7.25"><meta property='
        '"product:price:currency" content="USD">'
    )
    page = "<html><head>{head}</head><body>{body}</body></html>"
    assert structured.read(page.format(head=ld, body=""), "https://x.example/") == {
        "name": "Kettle",
        "price": 59.0,
        "currency": "EUR",
        "availability": "out_of_stock",
        "source": "json-ld",
    }
    found = structured.read(page.format(head="", body=micro), "https://x.example/")
    assert found is not None and (found["price"], found["availability"]) == (19.5, "in_stock")
    found = structured.read(page.format(head=meta, body=""), "https://x.example/")
    assert found is not None and (found["price"], found["currency"]) == (7.25, "USD")
    broken = page.format(head='<script type="application/ld+json">{"@type":</script>', body="")
    assert structured.read(broken, "https://x.example/") is None


def test_the_data_format_of_extract_carries_the_facts_only_when_asked() -> None:
    html = (
        b'<html><head><meta property="og:price:amount" content="12"></head><body><main>'
        b"<h1>Thing</h1><p>Some words about the thing.</p></main></body></html>"
    )
    assert extract.extract(html, url="https://x.example/").data is None
    read = extract.extract(html, url="https://x.example/", formats=("markdown", "data"))
    assert read.data is not None and read.data["price"] == 12.0


def test_money_and_words() -> None:
    assert conditions.money(57, "EUR") == "57 €"
    assert conditions.money(1299.5, "USD") == "$1,299.50"
    assert (
        conditions.describe({"kind": "mentions", "text": "remote"}) == "the page mentions “remote”"
    )
    assert conditions.describe(None) == "anything changes"


_TEXT = (
    "tell me when the price of https://a.example/x drops below 50 euros every day at 9am EST "
    "in stock mentions jobs new posts 7 Berlin time 18:00 CET pause resume what are you watching "
    "don't stop just run it now only when it's above 3% £ $ € 1,299.99 45,50 k"
)
_WORDS = st.sampled_from(_TEXT.split())


@settings(max_examples=150, deadline=None)
@given(st.lists(_WORDS, max_size=25))
def test_any_message_routes_to_a_valid_condition_and_zone(words: list[str]) -> None:
    found = router.route(" ".join(words))
    assert found.timezone in zoneinfo.available_timezones() | {"UTC"}
    if found.condition is not None:
        assert found.condition["kind"] in wants.KINDS
        assert set(found.condition) == {"kind", "value", "text", "unit"}
        if found.condition["kind"] in ("below", "above", "changes_by"):
            assert isinstance(found.condition["value"], float)
    if found.intent == "control" and found.control == "describe_watch":
        assert found.cadence is None and found.condition is None


@given(st.integers(min_value=0, max_value=10**7), st.sampled_from(["", ".5", ".25"]))
def test_numbers_people_write_read_back(whole: int, cents: str) -> None:
    value = float(f"{whole}{cents}")
    assert wants.number(f"{whole:,}{cents}") == value
    assert (
        wants.number(f"{whole:,}{cents}".replace(",", "X").replace(".", ",").replace("X", "."))
        == value
    )


class _Settings:
    llm_base_url: str | None = ""
    openai_api_key: str | None = None


class _Services:
    settings = _Settings()


class _Ctx:
    services = _Services()


def test_with_no_model_a_proposal_for_a_condition_in_words_falls_back_to_any_and_says_so() -> None:
    from lookout.agent import setup

    custom = {"kind": "custom", "value": None, "text": "it gets more vegetarian", "unit": None}
    route = router.Route("standing", ("https://menu.example/",), cadence="0 8 * * *",
                         condition=custom)  # fmt: skip
    page = {"url": "https://menu.example/", "title": "Menu", "markdown": "- Steak"}
    proposed = setup.propose("watch the menu", route, page, _Ctx())  # type: ignore[arg-type]
    assert "tell you when anything changes" in proposed.sentence
    assert "I can't judge “it gets more vegetarian” without a language model" in proposed.sentence
    assert proposed.part["condition"]["kind"] == "any" and proposed.part["note"]
