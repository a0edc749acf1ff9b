"""Pure parts of billing rendered pages: how a call's charge is spread over its reservation and
its top-ups, and what a watch on a rendered page is estimated to cost a month."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from lookout.access import metering
from lookout.capabilities import rendering
from lookout.watches import schedule, service

WS = uuid.uuid4()


def _meter(reserved: int, topups: list[int]) -> metering.Meter:
    db: Any = None
    meter = metering.Meter(db, WS, "call_x", "web.scrape", 1, "api_key:k", 60.0, reserved=reserved)
    meter.topups = [(f"call_x:topup:1.{n}", amount) for n, amount in enumerate(topups, 1)]
    return meter


def test_the_charge_fills_the_reservation_then_each_top_up_in_order() -> None:
    parts = _meter(6, [2, 2]).split(9)
    assert [(p.request_id, p.charged) for p in parts] == [
        ("call_x", 6), ("call_x:topup:1.1", 2), ("call_x:topup:1.2", 1),
    ]  # fmt: skip


def test_a_charge_below_the_reservation_leaves_the_top_ups_to_be_returned() -> None:
    parts = _meter(6, [2]).split(4)
    assert [p.charged for p in parts] == [4, 0]


def test_a_charge_never_exceeds_what_was_reserved() -> None:
    assert sum(p.charged for p in _meter(3, [2]).split(50)) == 5


def test_a_watch_on_a_rendered_page_is_estimated_at_the_rendered_price() -> None:
    now = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    runs = schedule.runs_per_month("0 9 * * *", "UTC", now)
    message = "watch https://shop.example/a and https://shop.example/b every day"
    plain = service.estimate_credits(message, "0 9 * * *", "UTC", now)
    rendered = service.estimate_credits(
        message, "0 9 * * *", "UTC", now, rendered={"https://shop.example/b"}
    )
    assert plain == runs * 2
    assert rendered == runs * (1 + rendering.RENDERED_UNITS)
    assert service.rendered_among(message, {"https://shop.example/b", "https://x.example"}) == [
        "https://shop.example/b"
    ]
