"""Issue #22: an API key never has more rights than its creator has now, and within that, the
scope chosen when it was made (full or read-only)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from lookout import app, appkeys
from lookout.access import accounts
from lookout.db import repo
from lookout.settings import Settings
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


async def scrape(client: Any, key: dict[str, Any], site: Site, path: str) -> Any:
    return await client.post("/v1/web/scrape", json={"url": site.url(path)}, headers=bearer(key))


async def test_a_key_stops_at_once_when_its_creator_leaves_the_workspace(
    signed_up: SignedUp, member_of: MemberOf, api_key: ApiKey, new_client: NewClient,
    site: Site, db: asyncpg.Pool,
) -> None:  # fmt: skip
    # Given an editor's key that has just run a verb call (so this process caches it)
    owner = await signed_up()
    editor = await member_of(owner.workspace_id, "editor")
    key = await api_key(editor)
    program = await new_client()
    await data_of(await scrape(program, key, site, "/before"))
    assert len(program.server.app[appkeys.KEY_CACHE]) == 1

    # When the editor leaves the workspace
    await db.execute(
        "DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2",
        owner.workspace_id, editor.user_id,
    )  # fmt: skip

    # Then the key is refused at once, on every route, and runs nothing
    refused = await error_of(await scrape(program, key, site, "/after"), 401, "unauthenticated")
    assert "no longer a member" in refused["message"]
    await error_of(await program.get("/api/me", headers=bearer(key)), 401, "unauthenticated")
    await error_of(await program.get("/v1/usage", headers=bearer(key)), 401, "unauthenticated")
    assert site.hits == {"/before": 1}
    balance = await repo.get_balance(db, workspace_id=owner.workspace_id)
    assert balance == 99 and await repo.ledger_sum(db, workspace_id=owner.workspace_id) == 99


async def test_a_key_of_a_creator_demoted_to_viewer_is_a_viewer_key(
    signed_up: SignedUp, member_of: MemberOf, api_key: ApiKey, new_client: NewClient,
    site: Site, db: asyncpg.Pool,
) -> None:  # fmt: skip
    # Given an editor's key, just used for a verb call (cached)
    owner = await signed_up()
    editor = await member_of(owner.workspace_id, "editor")
    key = await api_key(editor)
    program = await new_client()
    await data_of(await scrape(program, key, site, "/before"))

    # When the editor is made a viewer
    await db.execute(
        "UPDATE memberships SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2",
        owner.workspace_id, editor.user_id,
    )  # fmt: skip

    # Then the key reads as a viewer, and spends nothing, cached or not
    me = await data_of(await program.get("/api/me", headers=bearer(key)))
    assert me["workspace"]["role"] == "viewer"
    await data_of(await program.get("/v1/usage", headers=bearer(key)))
    await error_of(await scrape(program, key, site, "/after"), 403, "forbidden")
    fresh = await new_client()
    await error_of(await scrape(fresh, key, site, "/after"), 403, "forbidden")
    chat = await program.post("/api/chats", json={}, headers=bearer(key))
    await error_of(chat, 403, "forbidden")
    assert site.hits == {"/before": 1}
    assert await repo.get_balance(db, workspace_id=owner.workspace_id) == 99


async def test_a_read_only_key_reads_but_never_spends_or_changes_watches(
    signed_up: SignedUp, api_key: ApiKey, new_client: NewClient, site: Site,
    db: asyncpg.Pool, aiohttp_server: Any, settings: Settings,
) -> None:  # fmt: skip
    # Given an owner's read-only key, shown with its scope, and a chat of theirs
    owner = await signed_up()
    key = await api_key(owner, name="dashboard", scope="read-only")
    assert key["scope"] == "read-only"
    listed = (await data_of(await owner.client.get(owner.keys_url())))["keys"]
    assert [k["scope"] for k in listed] == ["read-only"]
    chat = await data_of(await owner.client.post("/api/chats", json={}), 201)
    program = await new_client()

    # When it reads, Then it may
    me = await data_of(await program.get("/api/me", headers=bearer(key)))
    assert me["workspace"]["role"] == "viewer"
    await data_of(await program.get("/v1/usage", headers=bearer(key)))
    await data_of(await program.get("/api/automations/watches", headers=bearer(key)))
    await data_of(await program.get(f"/api/chats/{chat['id']}", headers=bearer(key)))

    # When it spends or changes things, Then it is refused and says why
    refused = await error_of(await scrape(program, key, site, "/x"), 403, "forbidden")
    assert "read-only" in refused["message"]
    watch = {"chat_id": chat["id"], "message": f"watch {site.url('/w')}", "cadence": "daily"}
    started = await program.post("/api/automations/watches", json=watch, headers=bearer(key))
    await error_of(started, 403, "forbidden")
    said = await program.post(
        f"/api/chats/{chat['id']}/messages", json={"text": "hi"}, headers=bearer(key)
    )
    await error_of(said, 403, "forbidden")
    made = await program.post(owner.keys_url(), json={"name": "more"}, headers=bearer(key))
    await error_of(made, 403, "forbidden")

    # And over MCP too
    server = await aiohttp_server(app.create_app(settings))
    async with (
        httpx2.AsyncClient(headers=bearer(key), timeout=60) as http,
        streamable_http_client(str(server.make_url("/mcp")), http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("web_scrape", {"url": site.url("/mcp")})
    assert result.is_error and result.meta is not None
    assert result.meta["lookout/meta"]["error"]["code"] == "forbidden"
    assert site.hits == {}
    assert await repo.get_balance(db, workspace_id=owner.workspace_id) == 100


async def test_a_full_key_spends_and_an_owners_key_acts_as_an_editor(
    signed_up: SignedUp, api_key: ApiKey, new_client: NewClient, site: Site
) -> None:
    owner = await signed_up()
    key = await api_key(owner)
    program = await new_client()

    assert key["scope"] == "full"
    me = await data_of(await program.get("/api/me", headers=bearer(key)))
    assert me["workspace"]["role"] == "editor"
    await data_of(await scrape(program, key, site, "/ok"))
    assert site.hits == {"/ok": 1}


@pytest.mark.parametrize("scope", ["admin", "", None, ["full"]])
async def test_an_unknown_scope_is_refused(
    signed_up: SignedUp, scope: Any, db: asyncpg.Pool
) -> None:
    owner = await signed_up()

    response = await owner.client.post(owner.keys_url(), json={"name": "x", "scope": scope})

    assert "scope" in (await error_of(response, 400, "invalid_input"))["details"]["fields"]
    assert await repo.list_api_keys(db, workspace_id=owner.workspace_id) == []


async def test_an_operators_key_acts_for_the_workspace_owner(
    signed_up: SignedUp, db: asyncpg.Pool
) -> None:
    # Given a key made from the command line (no signed-in creator)
    owner = await signed_up()
    made = await accounts.create_key(
        db, workspace_id=owner.workspace_id, name="cli", scope="read-only"
    )

    # Then it is the owner's, with the scope asked for
    assert made.key.created_by == owner.user_id and made.key.scopes == ["read-only"]


async def test_a_key_whose_creator_is_gone_from_the_row_does_not_work(
    signed_up: SignedUp, api_key: ApiKey, new_client: NewClient, db: asyncpg.Pool
) -> None:
    owner = await signed_up()
    key = await api_key(owner)
    await db.execute("UPDATE api_keys SET created_by = NULL WHERE id = $1", uuid.UUID(key["id"]))
    program = await new_client()

    await error_of(await program.get("/api/me", headers=bearer(key)), 401, "unauthenticated")
