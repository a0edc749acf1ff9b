"""A handful of the mutation corpus (real article pages, tests/corpus/mutations.py) watched
through a real worker: the second run reports each edit and no noise, and its result is kept on
the run, readable over REST (the runs of a watch, and a run by id)."""

from __future__ import annotations

from typing import Any

import asyncpg
from aiohttp import web

from lookout import app
from lookout.settings import Settings
from tests.corpus import mutations
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_watches import (
    answers,
    dispatch_and_send,
    make_due,
    make_watch,
    wait_run,
    worker,
)

__all__ = ["tenant_factory", "worker"]
EDITS = ("price", "ranked_reorder", "paragraph_removed", "word")
NOISE = ("tracking_params", "outside_chrome", "relative_time")


def handful() -> list[mutations.Case]:
    """Edits from two pages, noise from one: seven watches."""
    pages = [page for page in mutations.page_ids()[3::20] if mutations.with_fixture(page)][:2]
    found = list(mutations.cases(pages))
    edits = [c for c in found if c.kind in EDITS and c.page == pages[c.kind in EDITS[2:]]]
    noise = [c for c in found if c.kind in NOISE and c.page == pages[0]]
    return edits + noise


async def test_a_worker_reports_each_corpus_edit_and_no_noise_and_keeps_it_on_the_run(
    db: asyncpg.Pool, settings: Settings, tenant_factory: TenantFactory, aiohttp_server: Any,
    aiohttp_client: Any, worker: None,
) -> None:  # fmt: skip
    # Given real article pages served locally, each watched by its own chat
    cases = handful()
    served = {f"/a/{n}": case.before for n, case in enumerate(cases)}

    async def handle(request: web.Request) -> web.Response:
        return web.Response(text=served[request.path], content_type="text/html")

    site = web.Application()
    site.router.add_get("/a/{n}", handle)
    server = await aiohttp_server(site)
    tenant = await tenant_factory(credits=100)
    watches = [
        await make_watch(db, settings, tenant, str(server.make_url(f"/a/{n}")))
        for n in range(len(cases))
    ]
    for watch in watches:
        await make_due(db, watch.id)
    await dispatch_and_send(db)
    for watch in watches:
        await wait_run(db, watch.id, 1)

    # When each page gets its edit or its noise, and the next runs come due
    for n, case in enumerate(cases):
        served[f"/a/{n}"] = case.after
    for watch in watches:
        await make_due(db, watch.id)
    await dispatch_and_send(db)

    # Then each edit is reported with its new value and no noise is: in the chat, on the run
    client = await aiohttp_client(app.create_app(settings))
    for watch, case in zip(watches, cases, strict=True):
        first, second = await wait_run(db, watch.id, 2)
        said = (await answers(db, watch.chat_id))[-1]
        response = await client.get(f"/api/automations/{watch.id}/runs", headers=tenant.headers)
        runs = (await response.json())["data"]["runs"]
        one = await client.get(
            f"/api/automations/{watch.id}/runs/{second.id}", headers=tenant.headers
        )
        by_id = (await one.json())["data"]
        assert [run["id"] for run in runs] == [str(second.id), str(first.id)]
        assert runs[1]["changes"] is None  # the first look compared nothing
        found = runs[0]["changes"]
        assert by_id["changes"] == found and by_id["status"] == "succeeded"
        assert set(found) >= {"changed", "modified", "added", "removed", "moved"}
        if not case.edit:
            assert found["changed"] is False, (case.kind, found)
            assert "No change since" in said, (case.kind, said)
            continue
        lines = [item["after"] for item in found["modified"] + found["moved"]]
        lines += found["added"] + found["removed"]
        assert found["changed"] is True and "Changed since" in said, (case.kind, said)
        assert any(case.expect in line for line in lines), (case.kind, found)
        assert case.value in said, (case.kind, said)

    missing = await client.get(
        f"/api/automations/{watches[0].id}/runs/{watches[1].id}", headers=tenant.headers
    )
    assert missing.status == 404
