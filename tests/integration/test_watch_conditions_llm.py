"""The LLM planner and conditions: the watch tools take the condition schema; a condition in
words is judged by the model on each run; the rule planner falls back to `any`, saying so."""

from __future__ import annotations

from typing import Any

import asyncpg
import redis.asyncio as aioredis

from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.agent import graph
from lookout.capabilities import fetch
from lookout.db import checkpointer, repo
from lookout.settings import Settings
from lookout.watches import service
from tests.integration import fake_openai as fake
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_chat_llm import client, llm_settings, menu, new_chat, run_now, say

__all__ = ["client", "llm_settings", "menu", "tenant_factory"]
fake_openai = fake.fake_openai
VEGGIE = {"kind": "custom", "value": None, "text": "the menu is mostly vegetarian", "unit": None}


async def test_the_model_starts_a_watch_with_a_condition_and_bad_ones_are_refused(
    client: Any,
    db: asyncpg.Pool,
    tenant_factory: TenantFactory,
    menu: dict[str, Any],
    fake_openai: fake.FakeOpenAI,
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    question = (
        f"keep an eye on {menu['url']} every day at 9am Berlin time, I care whether it gets "
        "more vegetarian"
    )
    # The model also passes a question, cadence and zone of its own: the watch ignores them
    # (only the condition is the model's; the rest is the person's own request).
    fake_openai.script = [
        fake.ToolCall("start_watch", {"condition": {"kind": "below"}}),
        fake.ToolCall(
            "start_watch",
            {
                "question": "something else",
                "cadence": "*/5 * * * *",
                "timezone": "UTC",
                "condition": VEGGIE,
            },
        ),
        fake.Text(["Watching ", "it."]),
    ]

    await say(client, tenant, chat_id, question)

    results = fake.tool_results(fake_openai.requests[-1])
    assert "invalid_input" in results[0] and "below needs a value" in results[0]
    [watch] = await db.fetch("SELECT trigger, action FROM automations")
    assert (watch["trigger"]["cron"], watch["trigger"]["timezone"]) == (
        "0 9 * * *",
        "Europe/Berlin",
    )
    assert watch["action"]["message"] == question
    assert watch["action"]["condition"] == VEGGIE
    offered = fake_openai.tool_names(0)
    assert "start_watch" in offered  # a standing request: start_watch and no other watch tool
    assert not {"stop_watch", "describe_watch", "pause_watch", "edit_watch"} & offered
    start = next(
        t for t in fake_openai.requests[0]["tools"] if t["function"]["name"] == "start_watch"
    )
    kinds = start["function"]["parameters"]["properties"]["condition"]["properties"]["kind"]
    assert "custom" in kinds["enum"] and "in_stock" in kinds["enum"]


async def test_a_condition_in_words_is_judged_by_the_model_each_run(
    db: asyncpg.Pool,
    llm_settings: Settings,
    tenant_factory: TenantFactory,
    redis_url: str,
    menu: dict[str, Any],
    fake_openai: fake.FakeOpenAI,
) -> None:
    tenant = await tenant_factory()
    person = Principal(
        kind="session", workspace_id=tenant.workspace.id, role="owner", user_id=tenant.user.id
    )
    chat = await repo.insert_chat(
        db, workspace_id=tenant.workspace.id, created_by=tenant.user.id, title="menu"
    )
    watch = await service.create(
        db,
        llm_settings,
        person,
        chat=chat,
        message=f"what is on {menu['url']}",
        cadence="0 * * * *",
        condition=VEGGIE,
    )
    fake_openai.script = [fake.Text(["no"]), fake.Text(["yes"]), fake.Text(["yes"])]
    redis = aioredis.Redis.from_url(redis_url)
    async with (
        fetch.open_session(llm_settings) as http,
        checkpointer.saver_context(llm_settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=llm_settings)
        chat_graph = graph.build(saver)
        for lines in (["Steak"], ["Salad", "Falafel"], ["Salad", "Falafel", "Soup"]):
            menu["lines"] = lines
            assert await run_now(services, chat_graph, watch) == "succeeded"
    await redis.aclose()

    runs = await db.fetch("SELECT condition_met FROM automation_runs ORDER BY created_at")
    assert [r["condition_met"] for r in runs] == [False, True, True]
    assert "the menu is mostly vegetarian" in fake_openai.requests[0]["messages"][-1]["content"]
    assert "Falafel" in fake_openai.requests[1]["messages"][-1]["content"]


async def test_with_the_rule_planner_a_condition_in_words_runs_as_any_change(
    db: asyncpg.Pool,
    settings: Settings,
    tenant_factory: TenantFactory,
    redis_url: str,
    menu: dict[str, Any],
) -> None:
    tenant = await tenant_factory()
    person = Principal(
        kind="session", workspace_id=tenant.workspace.id, role="owner", user_id=tenant.user.id
    )
    chat = await repo.insert_chat(
        db, workspace_id=tenant.workspace.id, created_by=tenant.user.id, title="menu"
    )
    watch = await service.create(
        db,
        settings,
        person,
        chat=chat,
        message=f"what is on {menu['url']}",
        cadence="0 * * * *",
        condition=VEGGIE,
    )
    redis = aioredis.Redis.from_url(redis_url)
    async with (
        fetch.open_session(settings) as http,
        checkpointer.saver_context(settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=settings)
        chat_graph = graph.build(saver)
        for lines in (["Steak"], ["Steak"], ["Salad"]):
            menu["lines"] = lines
            assert await run_now(services, chat_graph, watch) == "succeeded"
    await redis.aclose()

    runs = await db.fetch("SELECT condition_met FROM automation_runs ORDER BY created_at")
    assert [r["condition_met"] for r in runs] == [False, False, True]
    rows = await db.fetch(
        "SELECT parts FROM chat_messages WHERE chat_id = $1 AND role = 'assistant' ORDER BY seq",
        chat.id,
    )
    texts = ["".join(p.get("text", "") for p in r["parts"] if p["type"] == "text") for r in rows]
    assert texts[1].startswith("No change yet.") and texts[2].startswith("The page changed.")
