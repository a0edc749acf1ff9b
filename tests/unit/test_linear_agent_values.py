"""Reading values off pages and chat stays linear on hostile text (ReDoS), with the same results
on ordinary text."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from lookout.agent import comparing, fields, passages, router, subject, wants

PAGE = 200_000  # a page's text (a text/plain page is read as is)
CHAT = 8_000  # a chat message


def _passage(kind: passages.Kind, text: str) -> passages.Passage:
    return passages.Passage("https://example.com", "Example", "", kind, text, 0, 0)


HOSTILE: list[tuple[str, Callable[[], object]]] = [
    ("price: a digit at every word", lambda: fields.value_in("price", "1 " * (PAGE // 2))),
    ("address: hyphenated run", lambda: fields.value_in("address", "ab-" * (PAGE // 3))),
    ("amount: one long number", lambda: subject._nearest_amount("x " + "1" * PAGE, "price", None)),
    # 50,000 characters: each amount is parsed (linear, ~0.1 s here; the old scoring ~19 s)
    ("amount: many on one line", lambda: subject._nearest_amount("€1" * 25_000, "price", None)),
    ("compare: long digit run", lambda: router.route("1" * CHAT)),
    ("compare: long grouped number", lambda: wants.read("111," * (CHAT // 4))),
    ("cells: long blank run", lambda: comparing.facts([_passage("row", "|a" + " " * PAGE + "b|")])),
    ("label: long blank run", lambda: comparing.facts([_passage("item", "- " + " " * PAGE + "x")])),
]


@pytest.mark.parametrize("call", [c for _, c in HOSTILE], ids=[n for n, _ in HOSTILE])
def test_hostile_input_is_linear(call: Callable[[], object]) -> None:
    # A bound on a blow-up (the old patterns took minutes here), not a speed figure.
    start = time.process_time()
    call()
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize(
    ("text", "price"),
    [
        ("€1,299.00", "€1,299.00"),
        ("Now 1 000 € only", "1 000 €"),
        ("Price, 1 000 €", "1 000 €"),
        ("$ 12.50", "$ 12.50"),
        ("12,50 € per month", "12,50 €"),
        ("CHF 1'200.-", "CHF 1'200"),
        ("from 9.99 USD a year", "9.99 USD"),
        ("It costs 1,299 euros in total.", "1,299 euros"),
        ("| Basic | 9.99 € | 12 months |", "9.99 €"),
        ("raised 2 million dollars", "2 million dollars"),
        ("7 items for 3 €", "3 €"),
        ("In 2023, 5 000 000 EUR", "2023, 5 000 000 EUR"),  # the whole number run, as before
        ("1 2 3 EUR", "1 2 3 EUR"),
        ("5k € budget", "5k €"),
        ("no price here, 42 items", None),
    ],
)
def test_price_values(text: str, price: str | None) -> None:
    assert fields.value_in("price", text) == price


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Karl-Marx-Allee 12", "Karl-Marx-Allee 12"),
        ("Visit us: Hauptstraße 5, Berlin", "Hauptstraße 5"),
        ("Berlin-Mitte, Torstraße 1", "Torstraße 1"),
        ("Rosa-Luxemburg-Platz 2", "Rosa-Luxemburg-Platz 2"),
        ("Bahnhofstr. 3a", "Bahnhofstr. 3a"),
        ("-Müllerweg 7b", "Müllerweg 7b"),
        ("Am Kupfergraben 6, 10117 Berlin", "10117 Berlin"),
        ("221 Baker Street", "221 Baker Street"),
    ],
)
def test_address_values(text: str, address: str) -> None:
    assert fields.value_in("address", text) == address


@pytest.mark.parametrize(
    ("question", "field"),
    [
        ("when is it open", "opening hours"),
        ("when does the shop open on sunday?", "opening hours"),
        ("when x when y open now", "opening hours"),
        ("when is the museum opening", "date"),
        ("somewhen open", None),
        ("when will it ship", "date"),
    ],
)
def test_asked(question: str, field: str | None) -> None:
    assert fields.asked(question) == field


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Price: €1,299.00", (1299.0, "EUR")),
        ("only 99 euros", (99.0, "EUR")),
        ("1.299,00 EUR", (1299.0, "EUR")),
        ("EUR 1 000,00", (1000.0, "EUR")),
        ("shoe\nprice 12 €\nbag 30 €", (12.0, "EUR")),
        ("19.99€", (19.99, "EUR")),
        (",5 €", None),  # the run is ",5": not read as 5 € (it was)
    ],
)
def test_nearest_amount(text: str, found: tuple[float, str] | None) -> None:
    assert subject._nearest_amount(text, "price of the shoe", None) == found


@pytest.mark.parametrize(
    ("plain", "kind", "value", "unit"),
    [
        ("if the price is 1,299 or less", "below", 1299.0, None),
        ("1.299,99 € or lower", "below", 1299.99, "EUR"),
        ("2.5k or higher", "above", 2500.0, None),
        ("€ 30 or cheaper", "below", 30.0, "EUR"),
        ("100 eur or less please", "below", 100.0, "EUR"),
        ("tell me when it drops below 50 €", "below", 50.0, "EUR"),
        ("when it goes over 1,000 usd", "above", 1000.0, "USD"),
    ],
)
def test_compares(plain: str, kind: str, value: float, unit: str | None) -> None:
    found = wants.read(plain)
    assert found is not None
    assert (found["kind"], found["value"], found["unit"]) == (kind, value, unit)


@pytest.mark.parametrize(
    ("kind", "text", "facts"),
    [
        ("row", "| Weight | 2 kg |", {"weight": ("Weight", "2 kg")}),
        ("row", "|  Battery  |   | 10 h |", {"battery": ("Battery", "10 h")}),
        ("row", "| a | b | c |", {}),
        ("item", "- **Price:** €10", {"price": ("Price", "€10")}),  # the bold closes after ":"
        ("item", "- **Price**: €10", {"price": ("Price", "€10")}),
        ("text", "Note: **now** only", {"note": ("Note", "**now** only")}),
        ("item", "* Color: red", {"color": ("Color", "red")}),
        ("text", "Weight\uff1a2 kg", {"weight": ("Weight", "2 kg")}),
        ("text", "**Size**: M", {"size": ("Size", "M")}),
        ("item", "  - Height: 12 cm", {"height": ("Height", "12 cm")}),
    ],
)
def test_facts(kind: passages.Kind, text: str, facts: dict[str, tuple[str, str]]) -> None:
    assert comparing.facts([_passage(kind, text)]) == facts


def test_cells_keep_outer_blanks() -> None:
    assert comparing._cells(" a |  | b ") == [" a", "", "b "]
    assert comparing._cells("  a  ") == ["  a  "]
