"""rendering.looks_like_shell reads every fetched page under 256 KB on the event loop: it must
read a hostile one in linear time, and read ordinary ones as before."""

from __future__ import annotations

import time

import pytest

from lookout.capabilities import rendering

LIMIT = 256 * 1024
WORDS = b"<p>" + b"Words people read. " * 30 + b"</p>"
# What each pattern of looks_like_shell tried at every start to the end of the page (the old
# code: 80 KB of '<div id = ' took 4.5 s, 32 KB of '<' 0.56 s; quadratic, ~40 s at 256 KB).
HOSTILE = [b"<", b"<div ", b"<div id = ", b"<script", b"<noscript", b'<div id="app"><noscript>']


@pytest.mark.parametrize("unit", HOSTILE, ids=lambda unit: unit.decode())
@pytest.mark.parametrize("root", [b"", b'<div id="app"></div>'], ids=["no root", "app root"])
def test_a_hostile_page_is_read_in_linear_time(root: bytes, unit: bytes) -> None:
    page = (root + unit * (LIMIT // len(unit) + 1))[:LIMIT]
    started = time.process_time()
    rendering.looks_like_shell(page)
    # A bound on a blow-up, not a speed figure: the old patterns took tens of seconds here,
    # these take milliseconds.
    assert time.process_time() - started < 1.0


def test_shells_and_pages_are_told_apart_as_before() -> None:
    assert rendering.looks_like_shell(b'<body><div id="__next"></div><script>x()</script></body>')
    assert rendering.looks_like_shell(b"<body><div class=app id='root'>Loading...</div></body>")
    assert rendering.looks_like_shell(
        b"<body><noscript>You need to enable JavaScript to run this app.</noscript></body>"
    )
    assert not rendering.looks_like_shell(b'<body><div id="root">' + WORDS + b"</div></body>")
    assert not rendering.looks_like_shell(b"<body><p>short</p></body>")  # no app root: as is
    assert not rendering.looks_like_shell(b'<div id="application">' + WORDS + b"</div>")


def test_what_a_browser_does_not_show_is_not_text() -> None:
    # A script or a tag left open runs to the end of the page, as a browser reads it: its text
    # is not what a reader sees.
    script = b'<body><div id="app"></div><script>' + b"var words = 1; " * 40
    assert rendering.looks_like_shell(script)
    tag = b'<body><div id="app"></div><img alt="' + b"words " * 100
    assert rendering.looks_like_shell(tag)
    closed = b'<body><div id="app"></div><script>x()</script>' + WORDS
    assert not rendering.looks_like_shell(closed)
