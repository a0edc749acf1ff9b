"""What a `lookout` command says when it fails in a way nobody planned for: one line naming the
error and a log file holding its traceback (printed in full with `lookout -v`)."""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
import traceback
from pathlib import Path


def log_dir() -> Path:
    """A directory only this user can read (tracebacks may show paths and settings)."""
    directory = Path(tempfile.gettempdir()) / f"lookout-errors-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    return directory


def report(exc: BaseException, command: str, *, verbose: bool) -> int:
    """Print the one line (or the traceback when `verbose`); return the exit status, 1."""
    text = "".join(traceback.format_exception(exc))
    summary = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    if verbose:
        print(text, end="", file=sys.stderr)
        print(f"lookout {command}: unexpected error: {summary}", file=sys.stderr)
        return 1
    try:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
        path = log_dir() / f"{command}-{stamp}-{os.getpid()}.log"
        path.write_text(text)
        where = f"traceback in {path}"
    except OSError as write_error:
        where = f"no log written ({write_error.strerror}); run with -v for the traceback"
    print(
        f"lookout {command}: unexpected error: {summary} ({where}; -v prints it)", file=sys.stderr
    )
    return 1
