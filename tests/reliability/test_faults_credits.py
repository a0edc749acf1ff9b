"""Credits under fire: many concurrent metered calls never spend more than the balance."""

from __future__ import annotations

import asyncio
import collections
import uuid
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from lookout.db import repo
from tests.reliability import faults_report, faults_stack
from tests.reliability.conftest import FaultStack

pytestmark = pytest.mark.slow

TITLE = "Credits under fire"
WHAT = (
    "500 concurrent one-credit web.scrape calls from 5 API keys of one workspace holding 100 "
    "credits, spread over 2 web processes. Held: a 200 with its charge, or a 402 envelope."
)

CALLS = 500
KEYS = 5
BALANCE = 100
WEB_PROCESSES = 2


@pytest.fixture
async def page(aiohttp_server: Any) -> str:
    async def handle(request: web.Request) -> web.Response:
        html = "<html><head><title>Price</title></head><body><main><p>42 EUR</p></main></body>"
        return web.Response(text=html + "</html>", content_type="text/html")

    server_app = web.Application()
    server_app.router.add_get("/price", handle)
    return str((await aiohttp_server(server_app)).make_url("/price"))


async def call(
    http: aiohttp.ClientSession, base: str, key: str, url: str, gate: asyncio.Event
) -> tuple[int, dict[str, Any]]:
    await gate.wait()
    headers = {"Authorization": f"Bearer {key}", "X-Request-Id": uuid.uuid4().hex}
    async with http.post(base + "/v1/web/scrape", json={"url": url}, headers=headers) as response:
        return response.status, await response.json()


@pytest.mark.timeout(300)
async def test_concurrent_metered_calls_spend_exactly_the_balance(
    fault_stack: FaultStack, page: str
) -> None:
    # Given one workspace with 100 credits, five API keys, and two web processes
    stack = fault_stack
    _, workspace_id, keys = await stack.tenant(credits=BALANCE, keys=KEYS)
    bases = [
        (await faults_stack.web(stack.procs, f"web{n}"))[1] for n in range(WEB_PROCESSES)
    ]  # fmt: skip

    # When 500 one-credit calls are released at once, spread over the keys and the processes
    gate = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        calls = [
            asyncio.create_task(call(http, bases[n % WEB_PROCESSES], keys[n % KEYS], page, gate))
            for n in range(CALLS)
        ]
        await asyncio.sleep(0.5)
        gate.set()
        answers = await asyncio.gather(*calls)

    # Then exactly 100 succeed, the rest are refused 402, and the books balance at zero
    statuses = collections.Counter(status for status, _ in answers)
    succeeded = [body for status, body in answers if status == 200]
    refused = [
        body for status, body in answers
        if status == 402 and body["error"]["code"] == "insufficient_credits"
    ]  # fmt: skip
    balance = await repo.get_balance(stack.db, workspace_id=workspace_id)
    ledger = await stack.db.fetch(
        "SELECT request_id, kind, amount FROM credit_ledger WHERE workspace_id = $1", workspace_id
    )
    kinds = collections.Counter(row["kind"] for row in ledger)
    charged_ids = {body["meta"]["call_id"] for body in succeeded}
    settled_ids = {row["request_id"] for row in ledger if row["kind"] == "settle"}
    figures = {
        "tried": CALLS,
        "keys": KEYS,
        "web_processes": WEB_PROCESSES,
        "balance_before": BALANCE,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "held": len(succeeded) + len(refused),  # a 200 with a charge, or a 402 envelope
        "succeeded": len(succeeded),
        "charged": sum(body["meta"]["credits_charged"] for body in succeeded),
        "balance_after": balance,
        "ledger_rows": dict(kinds),
        "ledger_sum": sum(row["amount"] for row in ledger),
        "open_reservations": kinds["reserve"] - kinds["settle"] - kinds["refund"],
    }
    faults_report.write("credits", figures, title=TITLE, what=WHAT)
    assert len(succeeded) == BALANCE and len(refused) == CALLS - BALANCE, figures
    assert balance == 0 and figures["ledger_sum"] == balance, figures
    assert figures["charged"] == BALANCE, figures
    assert kinds == {"grant": 1, "reserve": BALANCE, "settle": BALANCE}, figures
    assert charged_ids == settled_ids
