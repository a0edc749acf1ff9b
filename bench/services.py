"""Backing services for benchmarks: the configured ones, or private throwaway servers."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from lookout import devservices


@contextlib.contextmanager
def backing() -> Iterator[tuple[str, str]]:
    """(DATABASE_URL, REDIS_URL): from LOOKOUT_BENCH_DATABASE_URL/_REDIS_URL, else started here."""
    dsn = os.environ.get("LOOKOUT_BENCH_DATABASE_URL")
    redis_url = os.environ.get("LOOKOUT_BENCH_REDIS_URL")
    if dsn and redis_url:
        yield dsn, redis_url
        return
    root = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
    root.chmod(0o755)
    try:
        with devservices.services(root) as (postgres, redis):
            yield postgres.url, redis.url
    finally:
        shutil.rmtree(root, ignore_errors=True)


def server_env(dsn: str, redis_url: str) -> dict[str, str]:
    """The environment of a Lookout server process a benchmark starts on `backing()`."""
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "REDIS_URL": redis_url,
        "LOOKOUT_SECRET_KEY": "bench-secret",
        "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "1",
        "LOOKOUT_PUBLIC_URL": "http://127.0.0.1",
    }
