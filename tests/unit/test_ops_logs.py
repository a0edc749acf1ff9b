"""Log lines carry the ids of what they are about, and never a credential."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator

import pytest

from lookout import logs


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """The root logger as `lookout web` configures it, writing JSON lines into a buffer."""
    sink = io.StringIO()
    handler = logging.StreamHandler(sink)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.ContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    yield sink
    root.removeHandler(handler)
    root.setLevel(old_level)


def lines(sink: io.StringIO) -> list[dict[str, str]]:
    return [json.loads(line) for line in sink.getvalue().splitlines()]


def test_bound_ids_appear_on_every_line_inside_the_block_only(captured: io.StringIO) -> None:
    log = logging.getLogger("lookout.test")
    with logs.bound(request_id="req-1", run_id="run-1"):
        log.info("inside")
        with logs.bound(turn_id="turn-1", job_id=None):
            log.info("nested")
    log.info("outside")

    inside, nested, outside = lines(captured)
    assert (inside["request_id"], inside["run_id"]) == ("req-1", "run-1")
    assert nested["turn_id"] == "turn-1" and nested["request_id"] == "req-1"
    assert "job_id" not in nested
    assert "request_id" not in outside


def test_an_explicit_extra_wins_over_the_context(captured: io.StringIO) -> None:
    with logs.bound(request_id="from-context"):
        logging.getLogger("lookout.test").info("x", extra={"request_id": "explicit"})
    assert lines(captured)[0]["request_id"] == "explicit"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("using key lk_Abc123def456ghi789", "Abc123def456ghi789"),
        ("Authorization: Bearer s3cr3t-t0ken-value", "s3cr3t-t0ken-value"),
        ("Cookie: lookout_session=abcDEF123456; other=1", "abcDEF123456"),
        ('{"email": "a@b.c", "password": "correct horse battery"}', "correct horse battery"),
        ("login email=a@b.c&password=hunter22", "hunter22"),
        ("connect postgresql://lookout:pg-pass-9@db:5432/lookout failed", "pg-pass-9"),
    ],
)
def test_credentials_are_masked_in_messages_and_tracebacks(
    captured: io.StringIO, text: str, secret: str
) -> None:
    log = logging.getLogger("lookout.test")
    log.warning("saw %s", text)
    try:
        raise RuntimeError(text)
    except RuntimeError:
        log.exception("failed")

    assert secret not in captured.getvalue()
    assert "***" in lines(captured)[0]["message"]


def test_text_format_is_one_readable_line_with_ids() -> None:
    record = logging.LogRecord("lookout.x", logging.INFO, __file__, 1, "run %s", ("done",), None)
    record.run_id = "run-9"
    text = logs.TextFormatter().format(record)
    assert text.endswith("INFO    lookout.x: run done [run_id=run-9]")


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        (
            "postgresql://lookout:s3cret@127.0.0.1:5432/db",
            "postgresql://lookout:***@127.0.0.1:5432/db",
        ),
        ("redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("fetching HTTP://u:p@x.test/a", "fetching HTTP://u:***@x.test/a"),
        ("git+ssh://git:tok@example.com/x", "git+ssh://git:***@example.com/x"),
        ("https://example.com/a@b", "https://example.com/a@b"),
    ],
)
def test_a_password_in_a_url_is_masked(line: str, masked: str) -> None:
    assert logs.redact(line) == masked


def test_a_long_line_of_dotted_words_is_read_in_linear_time() -> None:
    started = time.process_time()
    logs.redact("https://" + "a." * 100_000)
    # A bound on a blow-up, not a speed figure: a "\b" before the scheme tried every "." anew
    # (3 s for 32 KB, ~30 s here); this takes milliseconds.
    assert time.process_time() - started < 1.0
