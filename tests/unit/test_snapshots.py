"""A page's content at a check, compressed alone or against the previous version."""

from __future__ import annotations

import random

from lookout.watches import snapshots

WORDS = random.Random(7).choices(
    ["soup", "bread", "cake", "price", "open", "closed", "monday", "seats", "19", "4,50 €"], k=3000
)
PAGE = "\n".join(" ".join(WORDS[n : n + 12]) for n in range(0, len(WORDS), 12))


def test_an_edited_page_costs_about_its_edit_against_the_previous_version() -> None:
    before = PAGE.encode()
    after = PAGE.replace(PAGE[9000:9030], "an edited line").encode()
    body, used = snapshots.compress(after, before)
    assert used and len(body) < len(snapshots.alone(after)) / 3
    assert snapshots.decompress(body, before) == after


def test_a_rewritten_page_is_compressed_on_its_own() -> None:
    before = PAGE.encode()
    after = bytes(reversed(PAGE.encode()))[: len(before) // 2] + b"entirely new text"
    body, used = snapshots.compress(after, before)
    assert not used and snapshots.decompress(body) == after


def test_the_digest_is_the_contents_sha256() -> None:
    assert snapshots.digest(b"") == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
