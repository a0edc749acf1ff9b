"""What the rule planner asks for by purpose (registry.Ask), never by a verb's name: every
purpose has a verb, and the input that verb fills from it is input the verb accepts."""

from __future__ import annotations

import pytest

import lookout.capabilities  # noqa: F401 - registers the verbs
from lookout import errors
from lookout.capabilities import registry

ASKS = [
    registry.Ask(registry.READ, urls=tuple(f"https://example.com/{n}" for n in range(25))),
    registry.Ask(registry.READ, urls=("https://example.com/",), structured=True),
    registry.Ask(registry.MAP, urls=("https://example.com/",), limit=100),
    registry.Ask(registry.SEARCH, query="lookout release notes", limit=10),
    registry.Ask(registry.PLACES, query="coffee", near="Lyon", limit=5),
    registry.Ask(registry.PLACES, query="coffee", limit=1),
    registry.Ask(registry.REVIEWS, ref="google:ChIJabc", limit=10),
]


@pytest.mark.parametrize("ask", ASKS, ids=lambda ask: ask.need)
def test_every_purpose_is_served_with_input_its_verb_accepts(ask: registry.Ask) -> None:
    verb, arguments = registry.asked(ask)

    assert ask.need in verb.serves
    registry.validate_input(verb, arguments)  # raises InvalidInput if the fill is wrong


def test_reading_pages_keeps_to_what_the_verb_takes_and_asks_for_data_when_told() -> None:
    verb, many = registry.asked(ASKS[0])
    _, structured = registry.asked(ASKS[1])

    assert verb.urls_of is not None and len(verb.urls_of(many)) == 20
    assert "data" in structured["formats"]


def test_a_purpose_no_verb_serves_is_not_found() -> None:
    with pytest.raises(errors.NotFound):
        registry.serving("translate")


def test_a_tool_name_leads_back_to_its_verb() -> None:
    verb = registry.serving(registry.READ)

    assert registry.for_tool(verb.tool_name) is verb
    assert registry.for_tool("no_such_tool") is None
