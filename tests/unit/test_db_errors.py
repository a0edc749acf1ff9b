"""Driver errors become our errors at the db boundary."""

from __future__ import annotations

import asyncpg
import pytest

from lookout import errors
from lookout.db import pool


@pytest.mark.parametrize(
    "failure",
    [
        asyncpg.exceptions.AdminShutdownError("terminating connection"),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        ConnectionRefusedError(111, "Connect call failed"),
        # A connection cut by a Postgres restart, handed out again before it was seen closed
        asyncpg.exceptions.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress"
        ),
    ],
)
def test_a_lost_database_is_unavailable_not_an_internal_error(failure: Exception) -> None:
    with pytest.raises(errors.Unavailable) as raised, pool.translate_errors():
        raise failure

    assert raised.value.status == 503 and raised.value.code == "unavailable"
