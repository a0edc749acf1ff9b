"""What an installed Lookout needs ships in its wheel: a deploy from `pip install .` migrates
from any directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lookout import cli
from lookout.db import migrate

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_every_migration_and_the_statements(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy: setuptools builds in the tree (build/, egg-info)
    source.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    shutil.copytree(
        ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("lookout-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())

    expected = {
        f"lookout/db/migrations/{name}" for name, _ in migrate.load(migrate.migrations_dir())
    }
    assert "lookout/db/migrations/0001_initial.sql" in expected
    assert expected <= names
    assert "lookout/db/queries.sql" in names


def test_a_folder_without_migrations_is_an_error_not_an_empty_migration(tmp_path: Path) -> None:
    with pytest.raises(migrate.NoMigrations, match="no migration"):
        migrate.load(tmp_path)


def test_the_cli_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(migrate, "migrations_dir", lambda: tmp_path)
    monkeypatch.setenv("DATABASE_URL", "postgresql://127.0.0.1:1/none")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1")
    monkeypatch.setenv("LOOKOUT_SECRET_KEY", "k")
    monkeypatch.setenv("LOOKOUT_PUBLIC_URL", "http://lookout.test")

    assert cli.main(["migrate"]) == 2
    assert capsys.readouterr().err.startswith(f"lookout: no migration (*.sql) in {tmp_path}")
