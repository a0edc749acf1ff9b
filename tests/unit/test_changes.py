"""What changed between two looks at a page: every edit of the content, nothing else."""

from __future__ import annotations

from typing import Any

from lookout.agent import changes, lines, results, volatile

BEFORE = """# Hotel Aurora

Rooms from 149 € per night, breakfast included.

Only 3 seats left on the 09:00 shuttle; the deadline is March 3, 2025.

Current release: 3.12.10, signed by Anna Berg.

1. Alpha
2. Beta
3. Gamma

- 149 € — double room
- 99 € — single room

A paragraph that stays as it is, with [a link](https://a.example/x?id=3).

Posted 5 minutes ago"""


def look(before: str, after: str, *, scheduled: bool = False) -> changes.Looked:
    pages: dict[str, Any] = {}
    assert changes.track(pages, "u", changes.page_entry(before), at="t0", title="T",
                         scheduled=scheduled) is None  # fmt: skip
    looked = changes.track(pages, "u", changes.page_entry(after, pages["u"]), at="t1",
                           title="T", scheduled=scheduled)  # fmt: skip
    assert looked is not None
    return looked


def test_numbers_times_dates_versions_and_names_are_content() -> None:
    after = (
        BEFORE.replace("149 € per", "129 € per").replace("3 seats", "2 seats")
        .replace("09:00", "10:30").replace("March 3,", "March 17,")
        .replace("3.12.10", "3.12.11").replace("Anna Berg", "Anna Lind")
        .replace("- 149 € — double", "- 119 € — double")
    )  # fmt: skip

    looked = look(BEFORE, after)
    text = changes.describe(looked)

    assert looked.changed and len(changes.of_kind(looked.changes, "modified")) == 4
    assert "Rooms from «149 → 129» € per night" in text
    for new in ("«3 → 2»", "«09:00 → 10:30»", "«3 → 17»", "«3.12.10 → 3.12.11»", "«Berg → Lind»"):
        assert new in text, new
    assert "«149 → 119» € — double room" in text
    data = changes.data(looked)
    assert data["modified"][0] == {
        "before": "Rooms from 149 € per night, breakfast included.",
        "after": "Rooms from 129 € per night, breakfast included.",
    }
    assert data["counts"] == {"modified": 4, "added": 0, "removed": 0, "moved": 0}


def test_a_reordered_ranked_list_reads_as_moved_and_paragraphs_as_added_removed() -> None:
    after = BEFORE.replace("1. Alpha\n2. Beta\n3. Gamma", "1. Gamma\n2. Alpha\n3. Beta")
    after = after.replace("- 99 € — single room\n", "- 99 € — single room\n\nA new paragraph.\n")
    after = after.replace("Current release: 3.12.10, signed by Anna Berg.\n", "")

    data = changes.data(look(BEFORE, after))

    assert data["moved"] == [{"before": "3. Gamma", "after": "1. Gamma"}]
    assert data["added"] == ["A new paragraph."]
    assert data["removed"] == ["Current release: 3.12.10, signed by Anna Berg."]
    assert data["modified"] == []


def test_markup_whitespace_tracking_parameters_and_relative_times_are_not_changes() -> None:
    after = (
        BEFORE.replace("Rooms from", "**Rooms** from").replace("# Hotel", "## Hotel")
        .replace("- 149", "* 149").replace("breakfast included", "breakfast   included")
        .replace("?id=3", "?id=3&utm_source=news&fbclid=XYZ&_=1733000000#top")
        .replace("5 minutes ago", "just now")
    )  # fmt: skip

    looked = look(BEFORE, after)

    assert not looked.changed
    assert changes.describe(looked) == "No change since t0."


def test_no_line_cap_an_edit_deep_in_a_long_page_is_found_and_storage_is_bounded() -> None:
    long = "\n\n".join(
        f"Paragraph {i} says something rather long " + "x" * 200 for i in range(2000)
    )
    edited = long.replace("Paragraph 1990 says", "Paragraph 1990 said")

    entry = changes.page_entry(long)
    looked = look(long, edited)

    assert sum(len(line) for line in entry["lines"]) <= changes.KEPT_BYTES
    assert len(entry["hashes"]) > 1000  # the rest of the page, by hash
    assert looked.changed and changes.data(looked)["counts"]["modified"] == 1
    assert "said" in changes.describe(looked)


def test_reports_are_bounded_with_and_n_more() -> None:
    before = "\n\n".join(f"Item number {i} is here" for i in range(50))
    after = before + "\n\n" + "\n\n".join(f"Brand new thing {i}" for i in range(30))

    looked = look(before, after)
    text = changes.describe(looked)
    data = changes.data(looked)

    assert f"… and {30 - changes.SHOWN} more" in text
    assert len(data["added"]) == changes.DATA_ITEMS and data["counts"]["added"] == 30


def test_canonical_urls_drop_tracking_session_and_cache_busters_only() -> None:
    url = "https://a.example/p;jsessionid=AB12?utm_medium=x&page=2&v=1733&mc_cid=9&sid=77&q=soap#s"

    assert lines.canonical_url(url) == "https://a.example/p?page=2&q=soap"
    assert lines.canonical_url("https://a.example/dl?v=3.12.11") == "https://a.example/dl?v=3.12.11"


def test_a_line_changing_on_every_check_alone_is_marked_volatile_once_and_can_come_back() -> None:
    pages: dict[str, Any] = {}
    notes, reports = [], []
    for minute in range(6):
        page = f"# News\n\nA steady paragraph.\n\nLast refreshed 10:{minute:02d}:17"
        entry = changes.page_entry(page, pages.get("u"))
        looked = changes.track(pages, "u", entry, at=f"t{minute}", title="T", scheduled=True)
        if looked is not None:
            notes.append(looked.note)
            reports.append(looked.changed)
            if looked.note:
                assert looked.note in changes.describe(looked)  # said in the chat's answer

    assert reports == [True, True, True, False, False]
    assert [bool(note) for note in notes] == [False, False, True, False, False]
    assert "include the Last line again" in notes[2]

    said = volatile.undo("please include the Last line again", pages)
    page = "# News\n\nA steady paragraph.\n\nLast refreshed 11:00:17"
    again = changes.track(pages, "u", changes.page_entry(page, pages["u"]), at="t9",
                          title="T", scheduled=True)  # fmt: skip
    assert said is not None and "again" in said
    assert again is not None and again.changed


def test_other_changes_in_the_same_runs_keep_a_line_from_being_marked_volatile() -> None:
    pages: dict[str, Any] = {}
    notes = []
    for run in range(5):
        page = f"Counter {run * 7}\n\nStory number {run}" if run % 2 else f"Counter {run * 7}"
        entry = changes.page_entry(page, pages.get("u"))
        looked = changes.track(pages, "u", entry, at=f"t{run}", title="T", scheduled=True)
        notes.append(looked.note if looked else "")

    assert not any(notes)


def test_maps_results_report_new_removed_and_changed_fields() -> None:
    def place(ref: str, rating: float, count: int) -> dict[str, Any]:
        return {"place_ref": f"google:{ref}", "name": f"Café {ref}", "address": "Main St 1",
                "rating": rating, "reviews_count": count, "provider": "google"}  # fmt: skip

    before = results.entry("maps.search", {"places": [place("a", 4.5, 120), place("b", 4.0, 9)]})
    after = results.entry("maps.search", {"places": [place("c", 3.9, 1), place("a", 4.3, 121)]})
    pages: dict[str, Any] = {}
    changes.track(pages, "k", before, at="t0", title="k", scheduled=True)
    looked = changes.track(pages, "k", after, at="t1", title="k", scheduled=True)

    assert looked is not None
    data = changes.data(looked)
    assert data["counts"] == {"modified": 1, "added": 1, "removed": 1, "moved": 0}
    assert "«4.5 → 4.3»" in changes.describe(looked) and "«120 → 121»" in changes.describe(looked)
    assert data["added"] == ["Café c — Main St 1 — rated 3.9 — 1 reviews"]


def test_search_results_report_new_and_removed_links_not_their_rank() -> None:
    pages: dict[str, Any] = {}

    def search(*urls: str) -> changes.Looked | None:
        links = [{"url": url, "title": url.split("?")[0][-1]} for url in urls]
        output = {"links": links, "source": "search", "truncated": False}
        entry = results.entry("web.discover", output)
        return changes.track(pages, "k", entry, at="t", title="k", scheduled=False)

    search("https://a/1", "https://a/2")
    same = search("https://a/2", "https://a/1?utm_source=x")
    new = search("https://a/2", "https://a/3")

    assert same is not None and not same.changed
    assert new is not None and changes.data(new)["added"] == ["3 — https://a/3"]
    assert changes.data(new)["removed"] == ["1 — https://a/1"]


def test_a_snapshot_from_before_this_version_is_a_first_look_not_a_change() -> None:
    pages: dict[str, Any] = {"u": {"at": "t", "title": "T", "lines": ["old"], "digest": "d"}}

    looked = changes.track(pages, "u", changes.page_entry("new text"), at="t1", title="T",
                           scheduled=True)  # fmt: skip

    assert looked is None and pages["u"]["v"] == changes.VERSION


def test_a_number_opening_a_line_after_a_hard_break_is_content_not_a_list_marker() -> None:
    # html-to-markdown escapes "5)" only at a block's start; after a <br> it comes out bare
    before = "The box set:  \n5) Le Dodici Case (12 Dvd)  \n6) Hades (4 Dvd)"
    after = before.replace("5) Le", "12) Le")

    looked = look(before, after)

    assert looked.changed and "«5 → 12»" in changes.describe(looked)


async def test_asking_to_include_a_volatile_line_again_is_answered_by_the_graph() -> None:
    import types

    from lookout.agent import graph

    pages: dict[str, Any] = {}
    for minute in range(5):
        page = f"A steady paragraph.\n\nLast refreshed 10:{minute:02d}:17"
        entry = changes.page_entry(page, pages.get("u"))
        changes.track(pages, "u", entry, at=f"t{minute}", title="T", scheduled=True)
    assert pages["u"]["volatile"]
    ctx: Any = types.SimpleNamespace(scheduled=False)

    _, reply = await graph._reply({"input": "include the Last line again", "pages": pages}, ctx)

    assert "again" in reply.sentences[0] and reply.pages["u"]["volatile"] == {}
    assert pages["u"]["volatile"]  # the thread's state changes only through the reply


def test_a_places_opening_hours_and_price_level_are_said_field_by_field() -> None:
    week = "Mon 09:00\u201318:00, Tue 09:00\u201318:00, Sun closed"
    place = {"place_ref": "google:a", "name": "Café a", "rating": 4.5, "opening_hours": week,
             "price_level": "moderate", "provider": "google"}  # fmt: skip
    later = place | {"opening_hours": week.replace("Sun closed", "Sun 10:00\u201314:00")}
    pages: dict[str, Any] = {}
    for run, places in enumerate(([place], [later], [later | {"price_level": None}])):
        entry = results.entry("maps.search", {"places": places})
        looked = changes.track(pages, "k", entry, at=f"t{run}", title="k", scheduled=True)

        said = changes.describe(looked) if looked is not None else ""
        if run == 1:
            assert "~ Café a: opening hours changed: Sun closed \u2192 10:00\u201314:00" in said
        if run == 2:
            assert "~ Café a: price level changed: moderate \u2192 not given" in said
