"""`lookout web` freezes its heap once open (loops.freeze_heap); a test app does not."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from lookout import app
from lookout.settings import Settings


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.parametrize("freeze", [True, False])
async def test_the_heap_is_frozen_once_the_app_is_open_only_when_asked(
    aiohttp_client: Any, settings: Settings, freeze: bool
) -> None:
    client = await aiohttp_client(app.create_app(settings, freeze_heap=freeze))

    assert (gc.get_freeze_count() > 0) is freeze
    assert (await client.get("/readyz")).status == 200
