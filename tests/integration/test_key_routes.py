"""A workspace's API keys over HTTP: create (shown once), list, revoke, who may do what."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from lookout import appkeys
from lookout.access import keys
from tests.integration.accounts_helpers import (  # noqa: F401 - the *_fixture are fixtures
    Member,
    NewClient,
    api_key_fixture,
    bearer,
    data_of,
    error_of,
    member_of_fixture,
    new_client_fixture,
    signed_up_fixture,
)
from tests.integration.factories import Site, site

__all__ = ["site"]

SignedUp = Callable[..., Awaitable[Member]]
MemberOf = Callable[..., Awaitable[Member]]
ApiKey = Callable[..., Awaitable[dict[str, Any]]]


async def test_a_key_is_shown_once_listed_without_its_text_and_revoked_at_once(
    signed_up: SignedUp, new_client: NewClient, api_key: ApiKey
) -> None:
    # Given an owner who creates a key
    owner = await signed_up()
    created = await api_key(owner, name="deploy bot", rate_limit_per_minute=60)
    assert created["key"].startswith(keys.PREFIX)
    assert created["prefix"] == created["key"][: len(created["prefix"])]
    assert created["name"] == "deploy bot" and created["rate_limit_per_minute"] == 60
    assert created["revoked_at"] is None and created["last_used_at"] is None

    # When they list the workspace's keys, the text and the hash appear nowhere
    response = await owner.client.get(owner.keys_url())
    listed = (await data_of(response))["keys"]
    assert [k["id"] for k in listed] == [created["id"]]
    assert set(listed[0]) == {
        "id",
        "name",
        "prefix",
        "scope",
        "rate_limit_per_minute",
        "created_at",
        "last_used_at",
        "revoked_at",
    }
    assert created["key"] not in await response.text()

    # Then the key works until it is revoked, and not one request after
    program = await new_client()
    await data_of(await program.get("/api/me", headers=bearer(created)))
    revoked = await data_of(await owner.client.delete(f"{owner.keys_url()}/{created['id']}"))
    assert revoked["key"]["revoked_at"] is not None
    await error_of(await program.get("/api/me", headers=bearer(created)), 401, "unauthenticated")
    listed = (await data_of(await owner.client.get(owner.keys_url())))["keys"]
    assert listed[0]["revoked_at"] == revoked["key"]["revoked_at"]


async def test_a_key_cached_by_verb_calls_is_refused_by_every_web_process_at_once(
    signed_up: SignedUp, new_client: NewClient, api_key: ApiKey, site: Site
) -> None:
    # Given a key that two web processes have each just served a verb call (and cached)
    owner = await signed_up()
    created = await api_key(owner)
    processes = [await new_client(), await new_client()]
    body = {"url": site.url("/hello")}
    for process in processes:
        await data_of(await process.post("/v1/web/scrape", json=body, headers=bearer(created)))
        assert len(process.server.app[appkeys.KEY_CACHE]) == 1

    # When the owner revokes it through a third
    await data_of(await owner.client.delete(f"{owner.keys_url()}/{created['id']}"))

    # Then neither process runs one more call with it, nor counts one in its rate limit
    for process in processes:
        refused = await process.post("/v1/web/scrape", json=body, headers=bearer(created))
        error = await error_of(refused, 401, "unauthenticated")
        assert "revoked" in error["message"]
        assert "RateLimit-Remaining" not in refused.headers
    assert site.hits["/hello"] == 2


async def test_revoking_twice_is_fine(signed_up: SignedUp, api_key: ApiKey) -> None:
    owner = await signed_up()
    created = await api_key(owner)
    url = f"{owner.keys_url()}/{created['id']}"

    first = await data_of(await owner.client.delete(url))
    again = await data_of(await owner.client.delete(url))

    assert again["key"]["revoked_at"] == first["key"]["revoked_at"]


async def test_a_key_sees_itself_on_me_and_its_last_use_is_recorded(
    signed_up: SignedUp, new_client: NewClient, api_key: ApiKey
) -> None:
    owner = await signed_up()
    created = await api_key(owner)
    program = await new_client()

    me = await data_of(await program.get("/api/me", headers=bearer(created)))

    assert me["auth"] == "api_key" and me["user"] is None
    assert me["workspace"]["id"] == str(owner.workspace_id)
    assert me["workspace"]["role"] == "editor" and me["workspace"]["balance"] == 100
    assert me["workspaces"] == [me["workspace"]]
    listed = (await data_of(await owner.client.get(owner.keys_url())))["keys"]
    assert listed[0]["last_used_at"] is not None


async def test_another_workspaces_keys_are_not_found(signed_up: SignedUp, api_key: ApiKey) -> None:
    alice, bob = await signed_up(), await signed_up()
    bobs_key = await api_key(bob)
    bobs_url = alice.keys_url(bob.workspace_id)

    await error_of(await alice.client.get(bobs_url), 404, "not_found")
    await error_of(await alice.client.post(bobs_url, json={"name": "x"}), 404, "not_found")
    delete = await alice.client.delete(f"{bobs_url}/{bobs_key['id']}")
    await error_of(delete, 404, "not_found")
    # nor through Alice's own workspace: the key id alone opens nothing
    delete = await alice.client.delete(f"{alice.keys_url()}/{bobs_key['id']}")
    await error_of(delete, 404, "not_found")
    assert (await data_of(await bob.client.get(bob.keys_url())))["keys"][0]["revoked_at"] is None


async def test_a_key_cannot_reach_another_workspace(
    signed_up: SignedUp, new_client: NewClient, api_key: ApiKey
) -> None:
    alice, bob = await signed_up(), await signed_up()
    alices_key = await api_key(alice)
    program = await new_client()

    response = await program.get(alice.keys_url(bob.workspace_id), headers=bearer(alices_key))

    await error_of(response, 404, "not_found")


@pytest.mark.parametrize("key_id", [str(uuid.uuid4()), "not-a-uuid"])
async def test_revoking_an_unknown_key_is_not_found(signed_up: SignedUp, key_id: str) -> None:
    owner = await signed_up()

    response = await owner.client.delete(f"{owner.keys_url()}/{key_id}")

    await error_of(response, 404, "not_found")


async def test_a_viewer_can_list_keys_but_not_create_or_revoke_them(
    signed_up: SignedUp, member_of: MemberOf, api_key: ApiKey
) -> None:
    owner = await signed_up()
    created = await api_key(owner)
    viewer = await member_of(owner.workspace_id, "viewer")

    listed = await data_of(await viewer.client.get(viewer.keys_url()))
    create = await viewer.client.post(viewer.keys_url(), json={"name": "mine"})
    revoke = await viewer.client.delete(f"{viewer.keys_url()}/{created['id']}")

    assert [k["id"] for k in listed["keys"]] == [created["id"]]
    assert "editor" in (await error_of(create, 403, "forbidden"))["message"]
    await error_of(revoke, 403, "forbidden")


async def test_an_editor_can_create_keys(
    signed_up: SignedUp, member_of: MemberOf, api_key: ApiKey
) -> None:
    owner = await signed_up()
    editor = await member_of(owner.workspace_id, "editor")

    created = await api_key(editor)

    listed = (await data_of(await owner.client.get(owner.keys_url())))["keys"]
    assert [k["id"] for k in listed] == [created["id"]]


async def test_an_api_key_cannot_create_or_revoke_keys(
    signed_up: SignedUp, new_client: NewClient, api_key: ApiKey
) -> None:
    owner = await signed_up()
    created = await api_key(owner)
    program = await new_client()

    listed = await program.get(owner.keys_url(), headers=bearer(created))
    create = await program.post(owner.keys_url(), json={"name": "x"}, headers=bearer(created))
    revoke = await program.delete(f"{owner.keys_url()}/{created['id']}", headers=bearer(created))

    await data_of(listed)
    assert "sign in" in (await error_of(create, 403, "forbidden"))["message"]
    await error_of(revoke, 403, "forbidden")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "x", "rate_limit_per_minute": 0}, "rate_limit_per_minute"),
        ({"name": "x", "rate_limit_per_minute": 100_001}, "rate_limit_per_minute"),
        ({"name": "x", "scopes": ["all"]}, "scopes"),
    ],
)
async def test_a_bad_key_request_names_the_field(
    signed_up: SignedUp, body: dict[str, Any], field: str
) -> None:
    owner = await signed_up()

    response = await owner.client.post(owner.keys_url(), json=body)

    assert field in (await error_of(response, 400, "invalid_input"))["details"]["fields"]


async def test_keys_need_a_signed_in_caller(signed_up: SignedUp, new_client: NewClient) -> None:
    owner = await signed_up()
    anonymous = await new_client()

    await error_of(await anonymous.get(owner.keys_url()), 401, "unauthenticated")
    await error_of(
        await anonymous.post(owner.keys_url(), json={"name": "x"}), 401, "unauthenticated"
    )
    response = await anonymous.get(owner.keys_url(), headers={"Authorization": "Bearer lk_nope"})
    await error_of(response, 401, "unauthenticated")
