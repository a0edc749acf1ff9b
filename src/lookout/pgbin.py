"""Where this machine's PostgreSQL server binaries are, whatever their version.

Looked for in the order a packaged install answers best: `pg_config --bindir` (the version the
machine's development files name), then the newest `/usr/lib/postgresql/N/bin` (Debian and Ubuntu
install each major version there, off PATH), then PATH. A directory counts only if it holds both
`initdb` and `pg_ctl`: Debian's `pg_config` comes with libpq-dev and may name a server version
that is not installed.

`python -m lookout.pgbin` prints the directory, or exits 1 when there is none (the Makefile asks
it before it installs the distribution's server).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from lookout.errors import ConfigError

SERVER_BINARIES = ("initdb", "pg_ctl")
DEBIAN_ROOT = Path("/usr/lib/postgresql")
INSTALL_HINT = "install PostgreSQL's server (as root: apt-get install -y postgresql)"


def _is_bindir(path: Path) -> bool:
    return all(os.access(path / name, os.X_OK) for name in SERVER_BINARIES)


def _from_pg_config(search_path: str | None) -> Path | None:
    pg_config = shutil.which("pg_config", path=search_path)
    if pg_config is None:
        return None
    try:
        done = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = Path(done.stdout.strip())
    return found if done.returncode == 0 and done.stdout.strip() and _is_bindir(found) else None


def _major(path: Path) -> tuple[int, ...]:
    """15 → (15,); 9.6 → (9, 6); anything else sorts first."""
    try:
        return tuple(int(part) for part in path.parent.name.split("."))
    except ValueError:
        return (-1,)


def _newest_packaged(root: Path) -> Path | None:
    candidates = [bin_dir for bin_dir in root.glob("*/bin") if _is_bindir(bin_dir)]
    return max(candidates, key=_major) if candidates else None


def _from_path(search_path: str | None) -> Path | None:
    initdb = shutil.which("initdb", path=search_path)
    if initdb is None:
        return None
    # /usr/local/bin/initdb may be a link into /usr/lib/postgresql/N/bin: use the real directory,
    # where pg_ctl and postgres sit beside it.
    for directory in (Path(initdb).resolve().parent, Path(initdb).parent):
        if _is_bindir(directory):
            return directory
    return None


def find_bindir(*, search_path: str | None = None, packaged_root: Path = DEBIAN_ROOT) -> Path:
    """The directory of initdb and pg_ctl; ConfigError naming the fix when there is none.

    `search_path` is a PATH string (default: this process's PATH)."""
    for found in (
        _from_pg_config(search_path),
        _newest_packaged(packaged_root),
        _from_path(search_path),
    ):
        if found is not None:
            return found
    raise ConfigError(f"PostgreSQL server binaries (initdb, pg_ctl) were not found: {INSTALL_HINT}")


def tool(bindir: Path, name: str, *, search_path: str | None = None) -> str:
    """`name` beside the server binaries, or on PATH (Debian puts psql in both)."""
    beside = bindir / name
    if os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name, path=search_path)
    if found is None:
        raise ConfigError(f"{name} was not found in {bindir} or on PATH: {INSTALL_HINT}")
    return found


def main() -> int:
    try:
        print(find_bindir())
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
