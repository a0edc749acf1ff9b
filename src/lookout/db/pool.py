"""The asyncpg pool and the translation of driver errors into ours, at the db boundary."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg

from lookout import errors

logger = logging.getLogger(__name__)

_CONNECTION_ERRORS = (
    OSError,
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.TooManyConnectionsError,
    # A connection cut mid-statement (Postgres restarting) can be handed out again before its
    # socket is seen closed (our release skips the reset query); its next statement fails with
    # "cannot switch to state …" (seen: 3 of 544 calls in tests/reliability/test_faults_postgres).
    asyncpg.exceptions.InternalClientError,
)

# A constraint name tells which domain error a violation means; the rest are conflicts.
_CONSTRAINT_ERRORS: dict[str, type[errors.LookoutError]] = {
    "credit_balance_not_negative": errors.InsufficientCredits,
}


async def _init_connection(conn: asyncpg.Connection) -> None:
    for kind in ("json", "jsonb"):
        await conn.set_type_codec(kind, encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def _no_session_reset(conn: asyncpg.Connection) -> None:
    """Skip asyncpg's per-release reset query (RESET ALL, UNLISTEN, advisory unlock).

    Our pooled connections never LISTEN, SET or take advisory locks (migrate uses its own
    connection), and asyncpg still rolls back an open transaction on release. The default reset
    doubled the round trips of every statement (bench/door.py: 0.38x -> 0.43x of bare).
    """


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """Open a pool whose connections speak JSON for json/jsonb columns."""
    with translate_errors():
        pool = await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            init=_init_connection,
            reset=_no_session_reset,
            command_timeout=60,
            # No idle timer: asyncpg re-arms one on every release and cancels it on every
            # acquire (~3 % of a worker's CPU, py-spy --gil on bench/versus.py). A pool holds at
            # most max_size idle connections; a dead one fails its next use like any other.
            max_inactive_connection_lifetime=0,
        )
    assert pool is not None
    return pool


@contextlib.asynccontextmanager
async def pool_context(
    dsn: str, *, min_size: int = 1, max_size: int = 10
) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(dsn, min_size=min_size, max_size=max_size)
    try:
        yield pool
    finally:
        await pool.close()


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn asyncpg failures into LookoutErrors a client can be shown."""
    try:
        yield
    except asyncpg.exceptions.CheckViolationError as exc:
        raise _constraint_error(exc, errors.InvalidInput) from exc
    except asyncpg.exceptions.UniqueViolationError as exc:
        raise _constraint_error(exc, errors.Conflict) from exc
    except asyncpg.exceptions.ForeignKeyViolationError as exc:
        raise _constraint_error(exc, errors.NotFound) from exc
    except _CONNECTION_ERRORS as exc:
        logger.warning("database unavailable: %s", type(exc).__name__)
        raise errors.Unavailable("The database is unavailable; retry in a few seconds.") from exc


def _constraint_error(
    exc: asyncpg.exceptions.IntegrityConstraintViolationError,
    default: type[errors.LookoutError],
) -> errors.LookoutError:
    constraint: Any = getattr(exc, "constraint_name", None)
    kind = _CONSTRAINT_ERRORS.get(constraint or "", default)
    return kind(constraint=constraint) if kind is default else kind()
