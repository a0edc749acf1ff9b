"""Every `lookout` command: an unexpected error is one line and a log file; -v: the traceback."""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import pytest

from lookout import cli


def _boom(args: argparse.Namespace) -> int:
    raise RuntimeError("the disk said no\nsecond line")


@pytest.fixture(autouse=True)
def failing_migrate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(cli, "cmd_migrate", _boom)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_an_unexpected_error_is_one_line_naming_the_log(capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["migrate"])
    err = capsys.readouterr().err
    assert status == 1
    [line] = err.splitlines()
    assert line.startswith("lookout migrate: unexpected error: RuntimeError: the disk said no (")
    found = re.search(r"traceback in (\S+);", line)
    assert found, line
    logged = Path(found.group(1)).read_text()
    assert "Traceback (most recent call last)" in logged and "second line" in logged
    assert Path(found.group(1)).parent.stat().st_mode & 0o777 == 0o700


def test_verbose_prints_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["-v", "migrate"])
    err = capsys.readouterr().err
    assert status == 1
    assert "Traceback (most recent call last)" in err and "in _boom" in err
    assert err.strip().splitlines()[-1].startswith("lookout migrate: unexpected error")
