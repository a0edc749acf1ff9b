"""Sealed secrets: they open only with the same key, purpose and context, and never repeat."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lookout import errors
from lookout.access import secrets

KEY = "k" * 32


def test_a_sealed_value_opens_with_the_same_key_purpose_and_context() -> None:
    sealed = secrets.seal(KEY, "headers", b"Bearer abc", context=b"row-1")

    assert b"Bearer abc" not in sealed
    assert secrets.unseal(KEY, "headers", sealed, context=b"row-1") == b"Bearer abc"


def test_sealing_twice_gives_different_bytes() -> None:
    first = secrets.seal(KEY, "headers", b"same", context=b"row-1")
    second = secrets.seal(KEY, "headers", b"same", context=b"row-1")

    assert first != second


@pytest.mark.parametrize(
    ("key", "purpose", "context"),
    [("other-key" * 4, "headers", b"row-1"), (KEY, "other", b"row-1"), (KEY, "headers", b"row-2")],
)
def test_it_does_not_open_under_another_key_purpose_or_row(
    key: str, purpose: str, context: bytes
) -> None:
    sealed = secrets.seal(KEY, "headers", b"secret", context=b"row-1")

    with pytest.raises(errors.Conflict, match="LOOKOUT_SECRET_KEY"):
        secrets.unseal(key, purpose, sealed, context=context)


DAMAGES = {
    "flipped bit": lambda sealed: sealed[:-1] + bytes([sealed[-1] ^ 1]),
    "cut short": lambda sealed: sealed[:10],
    "unknown version": lambda sealed: b"\x02" + sealed[1:],
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_damaged_or_foreign_bytes_do_not_open(damage: Callable[[bytes], bytes]) -> None:
    sealed = secrets.seal(KEY, "headers", b"secret", context=b"row-1")

    with pytest.raises(errors.Conflict):
        secrets.unseal(KEY, "headers", damage(sealed), context=b"row-1")
