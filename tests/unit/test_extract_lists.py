"""Lists inside an article that trafilatura's "wild text" pass leaves out come back between the
paragraphs it kept (capabilities/lists.py); lists of links and lists outside the article do not."""

from __future__ import annotations

from lookout.capabilities import extract

_SAID = (
    "<p>{} The council met on Tuesday evening to discuss the new budget for the coming year, "
    "and the mayor spoke at length about the roads.</p>"
)


def markdown(middle: str, after: str = "") -> str:
    """A page in no container trafilatura knows: four paragraphs, `middle` after the second."""
    body = _SAID.format("First.") + _SAID.format("Second.") + middle
    body += _SAID.format("Third.") + _SAID.format("Fourth.") + after
    page = f"<html><body><div class='x'>{body}</div></body></html>"
    return extract.extract(page.encode(), url="https://news.example/a").markdown or ""


def test_a_price_list_and_a_ranked_list_between_paragraphs_are_kept_in_place() -> None:
    found = markdown(
        "<ul><li>149 € — double room</li><li>99 € — single room</li></ul>"
        "<ol><li>Lisbon</li><li>Porto</li></ol>"
    )

    second, prices = found.index("Second."), found.index("- 149 € — double room")
    assert second < prices < found.index("- 99 € — single room") < found.index("1. Lisbon")
    assert found.index("2. Porto") < found.index("Third.")


def test_a_list_of_links_between_paragraphs_stays_out() -> None:
    found = markdown(
        "<ul><li><a href='/a'>Read more about the city budget</a></li>"
        "<li><a href='/b'>Roads: what the mayor promised</a></li></ul>"
    )

    assert "Second." in found and "Third." in found and "Read more" not in found


def test_a_list_after_the_last_paragraph_stays_out() -> None:
    found = markdown("", after="<ul><li>Newsletter signup</li><li>Contact the desk</li></ul>")

    assert "Fourth." in found and "Newsletter" not in found
