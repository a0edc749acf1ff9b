from __future__ import annotations

import pytest

from lookout.access import keys


def test_an_entry_is_kept_for_its_ttl_and_no_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(keys.time, "monotonic", lambda: now[0])
    cache: keys.KeyCache[str] = keys.KeyCache(ttl_s=30.0)
    cache.put(b"digest", "principal")

    now[0] = 129.9
    assert cache.get(b"digest") == "principal"
    now[0] = 130.0
    assert cache.get(b"digest") is None
    assert len(cache) == 0


def test_the_cache_is_bounded_and_drops_the_oldest_entry() -> None:
    cache: keys.KeyCache[int] = keys.KeyCache(size=3)
    for number in range(5):
        cache.put(bytes([number]), number)

    assert len(cache) == 3
    assert cache.get(bytes([0])) is None and cache.get(bytes([1])) is None
    assert [cache.get(bytes([n])) for n in (2, 3, 4)] == [2, 3, 4]


def test_a_revocation_marker_outlives_every_cache_entry() -> None:
    assert keys.REVOKED_MARKER_TTL_S > keys.CACHE_TTL_S
