"""Time zones a person or a browser sends: IANA names only, never a crash."""

from __future__ import annotations

import pytest

from lookout import errors
from lookout.watches import schedule, workspace


@pytest.mark.parametrize("name", ["Europe", "Etc", "posixrules", "zone.tab", "../x", "a\x00b", ""])
def test_what_is_not_a_zone_is_invalid_input(name: str) -> None:
    with pytest.raises(errors.InvalidInput):
        workspace.checked_zone(name)


def test_a_directory_of_the_zone_database_is_no_zone_for_a_watch_either() -> None:
    with pytest.raises(errors.InvalidInput):
        schedule.zone("Europe")  # was IsADirectoryError: a 500 on PATCH /api/automations/{id}


@pytest.mark.parametrize("name", ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo"])
def test_iana_names_are_zones(name: str) -> None:
    assert workspace.checked_zone(name) == name
