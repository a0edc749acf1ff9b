"""PostgreSQL server binaries are found whatever the version and layout (fake layouts on disk)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lookout import pgbin
from lookout.errors import ConfigError


def _bindir(directory: Path, *names: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names or pgbin.SERVER_BINARIES:
        tool = directory / name
        tool.write_text("#!/bin/sh\nexit 0\n")
        tool.chmod(0o755)
    return directory


def _packaged(root: Path, *versions: str) -> Path:
    for version in versions:
        _bindir(root / version / "bin")
    return root


def _pg_config(directory: Path, answer: Path) -> str:
    """A directory holding only a pg_config that names `answer` (what libpq-dev ships)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "pg_config"
    script.write_text(f'#!/bin/sh\n[ "$1" = --bindir ] && echo {answer}\n')
    script.chmod(0o755)
    return str(directory)


@pytest.mark.parametrize(
    ("versions", "newest"),
    [(["15"], "15"), (["15", "16"], "16"), (["17", "9.6", "16"], "17"), (["16", "15"], "16")],
)
def test_the_newest_packaged_version_is_chosen(
    tmp_path: Path, versions: list[str], newest: str
) -> None:
    root = _packaged(tmp_path / "lib", *versions)
    found = pgbin.find_bindir(search_path=str(tmp_path / "empty"), packaged_root=root)
    assert found == root / newest / "bin"


def test_pg_config_names_the_one_to_use_before_the_newest(tmp_path: Path) -> None:
    root = _packaged(tmp_path / "lib", "15", "17")
    path = _pg_config(tmp_path / "bin", root / "15" / "bin")
    assert pgbin.find_bindir(search_path=path, packaged_root=root) == root / "15" / "bin"


def test_a_pg_config_naming_a_version_without_its_server_is_passed_over(tmp_path: Path) -> None:
    # Debian's libpq-dev: pg_config says 17, only the 16 server is installed.
    root = _packaged(tmp_path / "lib", "16")
    _bindir(root / "17" / "bin", "psql")
    path = _pg_config(tmp_path / "bin", root / "17" / "bin")
    assert pgbin.find_bindir(search_path=path, packaged_root=root) == root / "16" / "bin"


def test_binaries_only_on_path_are_found(tmp_path: Path) -> None:
    on_path = _bindir(tmp_path / "opt" / "pg" / "bin")
    found = pgbin.find_bindir(search_path=str(on_path), packaged_root=tmp_path / "nothing")
    assert found == on_path


def test_a_link_on_path_leads_to_the_real_directory(tmp_path: Path) -> None:
    real = _bindir(tmp_path / "lib" / "16" / "bin")
    links = tmp_path / "local" / "bin"
    links.mkdir(parents=True)
    (links / "initdb").symlink_to(real / "initdb")  # only initdb is linked, as on this machine
    found = pgbin.find_bindir(search_path=str(links), packaged_root=tmp_path / "nothing")
    assert found == real


def test_none_installed_names_the_fix(tmp_path: Path) -> None:
    half = _bindir(tmp_path / "lib" / "16" / "bin", "initdb")  # no pg_ctl: not a server
    with pytest.raises(ConfigError) as caught:
        pgbin.find_bindir(search_path=str(half), packaged_root=tmp_path / "lib")
    assert "apt-get install -y postgresql" in str(caught.value)


def test_the_makefile_check_prints_the_directory() -> None:
    found = subprocess.run(
        [sys.executable, "-m", "lookout.pgbin"], capture_output=True, text=True, check=False
    )
    assert found.returncode == 0 and Path(found.stdout.strip(), "initdb").exists()
