"""`lookout dev` when an embedded service cannot start: one line naming the cause, in the tool's
own words, and the fix; never a traceback. And its cluster where the server user can reach it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout import devservices

INITDB_SAYS = 'initdb: error: could not create directory "pg": No space left on device'


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory the postgres user can enter (pytest's own tmp_path is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="lookout-dev-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _fake_postgres(directory: Path) -> Path:
    """A pg_config naming a bindir whose initdb fails as a full disk makes it fail."""
    bindir = directory / "pg" / "bin"
    bindir.mkdir(parents=True)
    scripts = {
        "initdb": f"#!/bin/sh\necho 'The files belonging to this database system...'\n"
        f"echo '{INITDB_SAYS}' >&2\nexit 1\n",
        "pg_ctl": "#!/bin/sh\nexit 0\n",
    }
    for name, text in scripts.items():
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    config_dir = directory / "config"
    config_dir.mkdir()
    (config_dir / "pg_config").write_text(f"#!/bin/sh\necho {bindir}\n")
    (config_dir / "pg_config").chmod(0o755)
    for path in (directory, directory / "pg"):
        path.chmod(0o755)
    return config_dir


def test_an_initdb_that_fails_is_one_line_with_its_message_and_the_fix(open_dir: Path) -> None:
    # Given a machine whose initdb fails, and no DATABASE_URL
    config_dir = _fake_postgres(open_dir / "fake")
    checkout = open_dir / "checkout"
    checkout.mkdir()
    checkout.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env["PATH"] = f"{config_dir}{os.pathsep}{env['PATH']}"

    # When `lookout dev` starts
    lookout = Path(sys.executable).parent / "lookout"
    done = subprocess.run(
        [str(lookout), "dev"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60
    )

    # Then it stops with one line: what failed, initdb's own words, and what to do
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("lookout: initdb (creating the cluster in ")
    assert INITDB_SAYS in lines[0]
    assert "set DATABASE_URL" in lines[0] and "delete" in lines[0]


def test_a_redis_that_exits_at_start_is_one_line_with_its_message(
    open_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a redis-server that refuses to start (as one does on a bad config)
    fake = open_dir / "bin"
    fake.mkdir()
    (fake / "redis-server").write_text(
        "#!/bin/sh\necho '# Fatal: Bad directive or wrong number of arguments'\nexit 1\n"
    )
    (fake / "redis-server").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")

    # When it is started
    with pytest.raises(devservices.ConfigError) as caught:
        devservices.start_redis(open_dir / "redis")

    # Then the error is one line with its words, its log and the way out
    message = str(caught.value)
    assert "\n" not in message
    assert "exited at start (exit 1): # Fatal: Bad directive" in message
    assert "set REDIS_URL" in message and str(open_dir / "redis" / "redis.log") in message


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's checkouts need moving")
def test_a_cluster_the_postgres_user_cannot_reach_lives_where_it_can(open_dir: Path) -> None:
    # Given a checkout in a directory only root can enter (/root/…, mktemp -d)
    private = open_dir / "private"
    private.mkdir(mode=0o700)
    data_dir = private / "lookout" / ".lookout" / "pg"
    home = open_dir / "clusters"

    # When its cluster is placed, twice (a re-run)
    placed = devservices.place_cluster(data_dir, home=home)
    again = devservices.place_cluster(data_dir, home=home)

    # Then it lives under home, owned by postgres, the checkout links to it, and nothing of the
    # checkout was opened to others
    assert placed == again and placed.parent == home
    assert data_dir.is_symlink() and data_dir.resolve() == placed
    assert placed.stat().st_uid == devservices._server_user().pw_uid
    assert private.stat().st_mode & 0o777 == 0o700


def test_a_cluster_the_postgres_user_can_reach_stays(open_dir: Path) -> None:
    data_dir = open_dir / "checkout" / ".lookout" / "pg"
    (open_dir / "checkout").mkdir(mode=0o755)
    (open_dir / "checkout").chmod(0o755)
    placed = devservices.place_cluster(data_dir, home=open_dir / "clusters")
    assert placed == data_dir and not (open_dir / "clusters").exists()
