"""The LLM planner through the chat door, against a local OpenAI-compatible endpoint.

The real client path (langchain-openai → HTTP → a fake server streaming SSE chunks), the real
verbs on a local site, and the chat stream read with a real SSE parser. No network.
"""

from __future__ import annotations

import datetime as dt
import socket
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
from aiohttp import web

from lookout import app
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.agent import graph
from lookout.capabilities import fetch
from lookout.db import checkpointer, repo
from lookout.settings import Settings
from lookout.watches import runner, service
from tests.integration import fake_openai as fake
from tests.integration import sse
from tests.integration.factories import Site, Tenant, TenantFactory, site, tenant_factory
from tests.integration.test_mcp_connectors import SECRET, Remote, remote

__all__ = ["remote", "site", "tenant_factory"]
fake_openai = fake.fake_openai


@pytest.fixture
def llm_settings(settings: Settings, fake_openai: fake.FakeOpenAI) -> Settings:
    return settings.replace(llm_base_url=fake_openai.base_url, llm_model="fake-model")


@pytest.fixture
async def client(aiohttp_client: Any, llm_settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(llm_settings))


async def new_chat(client: Any, tenant: Tenant) -> str:
    response = await client.post("/api/chats", json={}, headers=tenant.headers)
    assert response.status == 201
    return str((await response.json())["data"]["id"])


async def say(client: Any, tenant: Tenant, chat_id: str, text: str) -> sse.Stream:
    base = str(client.make_url("")).rstrip("/")
    return await sse.stream(
        base, "POST", f"/api/chats/{chat_id}/messages",
        headers=tenant.headers, json_body={"text": text},
    )  # fmt: skip


async def stored(client: Any, tenant: Tenant, chat_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/chats/{chat_id}/messages", headers=tenant.headers)
    return list((await response.json())["data"]["messages"])


def read_page_back(body: dict[str, Any]) -> fake.Step:
    """The model's second step: say what the scraped page is called and what changed."""
    page = fake.tool_data(body)[-1]["pages"][0]
    return fake.Text(["The ", "page ", "is ", f"titled “{page['title']}”. ", page["what_changed"]])


async def test_llm_turn_calls_a_verb_then_streams_its_answer(
    client: Any,
    tenant_factory: TenantFactory,
    site: Site,
    db: asyncpg.Pool,
    fake_openai: fake.FakeOpenAI,
) -> None:
    # Given a model that scrapes the page, then talks about what it read
    tenant = await tenant_factory(credits=10)
    chat_id = await new_chat(client, tenant)
    fake_openai.script = [fake.ToolCall("web_scrape", {"url": site.url("/menu")}), read_page_back]

    # When the user asks about the page
    result = await say(client, tenant, chat_id, f"what is on {site.url('/menu')} right now?")

    # Then the stream shows the call, its output, then the answer token by token
    kinds = result.types
    assert kinds[0] == "start" and kinds[-1] == "finish"
    tool_in, tool_out = kinds.index("tool-input-available"), kinds.index("tool-output-available")
    assert tool_in < tool_out < kinds.index("text-start") < kinds.index("text-delta")
    assert result.parts[tool_in]["toolName"] == "web_scrape"
    assert kinds.count("text-delta") >= 4
    assert result.text.startswith("The page is titled “menu”. First look at this page")
    assert site.hits == {"/menu": 1}
    # And the scrape was charged through the one adapter
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 9
    # And the model was offered the verbs but no watch tool (a one-shot read), and told the
    # router's call; the page came back to it fenced and labelled as data from the web
    offered = fake_openai.tool_names(0)
    assert {"web_scrape", "web_discover", "maps_search"} <= offered
    assert not offered & {"start_watch", "stop_watch", "refresh_watch"}
    assert "Router decision for this message: one-shot" in fake_openai.system_prompt(0)
    shown = fake.tool_results(fake_openai.requests[1])[-1]
    assert shown.startswith("Result of the tool web_scrape: content from the web")
    assert fake.tool_data(fake_openai.requests[1])[-1]["pages"][0]["title"] == "menu"
    # And the answer is stored once, after its tool call
    messages = await stored(client, tenant, chat_id)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert [p["type"] for p in messages[1]["parts"]] == ["tool-web_scrape", "text"]
    assert messages[1]["parts"][1]["text"] == result.text


async def test_a_second_look_tells_the_model_what_changed(
    client: Any, tenant_factory: TenantFactory, site: Site, fake_openai: fake.FakeOpenAI
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    scrape = fake.ToolCall("web_scrape", {"url": site.url("/news")})
    fake_openai.script = [scrape, read_page_back, scrape, read_page_back]

    await say(client, tenant, chat_id, f"summarize {site.url('/news')}")
    again = await say(client, tenant, chat_id, f"summarize {site.url('/news')} again")

    assert "No change since" in again.text
    # the model saw the first turn as history (bounded state, read back from the checkpoint)
    history = [m["content"] for m in fake_openai.requests[2]["messages"][1:3]]
    assert history[0] == f"summarize {site.url('/news')}"
    assert history[1].startswith("The page is titled “news”.")


@pytest.mark.parametrize(
    ("failing", "said"), [("refused", "could not be reached"), ("503", "HTTP 503")]
)
async def test_a_failing_llm_endpoint_is_a_sentence_and_the_turn_finishes(
    aiohttp_client: Any,
    llm_settings: Settings,
    tenant_factory: TenantFactory,
    site: Site,
    db: asyncpg.Pool,
    fake_openai: fake.FakeOpenAI,
    failing: str,
    said: str,
) -> None:
    # Given an endpoint that refuses connections, or answers 503
    if failing == "refused":
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        llm_settings = llm_settings.replace(llm_base_url=f"http://127.0.0.1:{port}/v1")
    else:
        fake_openai.fail_status = 503
    client = await aiohttp_client(app.create_app(llm_settings))
    tenant = await tenant_factory(credits=10)
    chat_id = await new_chat(client, tenant)

    result = await say(client, tenant, chat_id, f"what is on {site.url('/menu')} right now?")

    # Then the answer says what failed in words, and the turn finishes and is kept
    assert result.types[-1] == "finish" and "error" not in result.types
    assert "I couldn't finish this answer: the language model" in result.text
    assert said in result.text
    notice = next(p for p in result.parts if p["type"] == "data-notice")
    assert notice["data"]["code"] == "upstream_error"
    assert [m["role"] for m in await stored(client, tenant, chat_id)] == ["user", "assistant"]
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 10


async def test_a_standing_request_becomes_a_watch_even_if_the_model_forgets(
    client: Any, tenant_factory: TenantFactory, site: Site, fake_openai: fake.FakeOpenAI
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    fake_openai.script = [fake.ToolCall("web_scrape", {"url": site.url("/menu")}), read_page_back]

    result = await say(client, tenant, chat_id, f"watch {site.url('/menu')} every day")

    assert "Router decision for this message: standing" in fake_openai.system_prompt(0)
    watch = next(p for p in result.parts if p["type"] == "data-watch")
    assert watch["data"]["event"] == "started"
    assert "I'll check this" in result.text and result.types[-1] == "finish"


async def test_ambiguous_message_asks_once_then_proceeds(
    client: Any, tenant_factory: TenantFactory, site: Site, fake_openai: fake.FakeOpenAI
) -> None:
    tenant = await tenant_factory()
    chat_id = await new_chat(client, tenant)
    ask = fake.Text(["Just this once, ", "or should I keep watching it for you?"])
    scrape = fake.ToolCall("web_scrape", {"url": site.url("/news")})
    fake_openai.script = [ask, scrape, read_page_back]

    asked = await say(client, tenant, chat_id, site.url("/news"))
    answered = await say(client, tenant, chat_id, "just once please")

    assert 'ambiguous: call no tool; ask exactly "Just this once' in fake_openai.system_prompt(0)
    assert "data-clarify" in asked.types
    assert f"earlier request: '{site.url('/news')}'" in fake_openai.system_prompt(1)
    assert "one-shot" in fake_openai.system_prompt(1)
    assert "titled “news”" in answered.text


def echo_tool_text(body: dict[str, Any]) -> fake.Step:
    return fake.Text([fake.tool_data(body)[-1]["text"]])


async def test_the_model_calls_a_workspace_mcp_connector_tool(
    client: Any, tenant_factory: TenantFactory, remote: Remote, fake_openai: fake.FakeOpenAI
) -> None:
    # Given a workspace with its own MCP server registered
    tenant = await tenant_factory()
    body = {"name": "remote", "url": remote.url, "headers": {"Authorization": SECRET},
            "chat_use": True}  # fmt: skip
    path = f"/api/workspaces/{tenant.workspace.id}/mcp-connectors"
    assert (await client.post(path, json=body, headers=tenant.headers)).status == 201
    chat_id = await new_chat(client, tenant)
    fake_openai.script = [fake.ToolCall("remote__shout", {"text": "hi there"}), echo_tool_text]

    # When the model calls one of its tools
    result = await say(client, tenant, chat_id, "shout hi there with my remote tool")

    # Then the call shows in the stream and its answer reaches the model
    assert "remote__shout" in fake_openai.tool_names(0)
    call = next(p for p in result.parts if p["type"] == "tool-input-available")
    assert call["toolName"] == "remote__shout" and call["input"] == {"text": "hi there"}
    assert fake.tool_data(fake_openai.requests[1])[-1]["text"] == "HI THERE"
    assert result.text == "HI THERE" and result.types[-1] == "finish"


@pytest.fixture
async def menu(aiohttp_server: Any) -> dict[str, Any]:
    """A page whose list the test edits between scheduled runs."""
    state: dict[str, Any] = {"lines": ["Soup of the day", "Fresh bread"]}

    async def handle(request: web.Request) -> web.Response:
        items = "".join(f"<li>{line}</li>" for line in state["lines"])
        html = f"<html><head><title>Menu</title></head><body><main><h1>Menu</h1><ul>{items}"
        return web.Response(text=html + "</ul></main></body></html>", content_type="text/html")

    server_app = web.Application()
    server_app.router.add_get("/menu", handle)
    state["url"] = str((await aiohttp_server(server_app)).make_url("/menu"))
    return state


async def watched_chat(
    db: asyncpg.Pool, settings: Settings, tenant: Tenant, url: str
) -> repo.Automation:
    person = Principal(
        kind="session", workspace_id=tenant.workspace.id, role="owner", user_id=tenant.user.id
    )
    chat = await repo.insert_chat(
        db, workspace_id=tenant.workspace.id, created_by=tenant.user.id, title="menu"
    )
    return await service.create(
        db, settings, person, chat=chat, message=f"what is on {url}", cadence="0 * * * *"
    )


async def run_now(services: Services, chat_graph: graph.Graph, watch: repo.Automation) -> str:
    run_id = await repo.insert_run(
        services.db,
        automation_id=watch.id,
        workspace_id=watch.workspace_id,
        scheduled_for=dt.datetime.now(dt.UTC),
        manual=True,
    )
    assert run_id is not None
    return await runner.execute(services, chat_graph, run_id)


async def test_scheduled_llm_turns_have_no_watch_tools_and_report_what_changed(
    db: asyncpg.Pool,
    llm_settings: Settings,
    tenant_factory: TenantFactory,
    menu: dict[str, Any],
    redis_url: str,
    fake_openai: fake.FakeOpenAI,
) -> None:
    # Given a watched chat
    watch = await watched_chat(db, llm_settings, await tenant_factory(), menu["url"])
    scrape = fake.ToolCall("web_scrape", {"url": menu["url"]})
    fake_openai.script = [scrape, read_page_back, scrape, read_page_back]
    redis = aioredis.Redis.from_url(redis_url)

    # When it runs twice on schedule, the page gaining a line in between
    async with (
        fetch.open_session(llm_settings) as http,
        checkpointer.saver_context(llm_settings.database_url) as saver,
    ):
        services = Services(db=db, redis=redis, http=http, settings=llm_settings)
        chat_graph = graph.build(saver)
        assert await run_now(services, chat_graph, watch) == "succeeded"
        menu["lines"].append("Apple pie")
        assert await run_now(services, chat_graph, watch) == "succeeded"
    await redis.aclose()

    # Then the model was never offered watch tools, and the second run says what was added
    assert all(not fake_openai.tool_names(i) & {"start_watch", "stop_watch"} for i in range(4))
    assert "scheduled check" in fake_openai.system_prompt(2)
    rows = await db.fetch(
        "SELECT parts FROM chat_messages WHERE chat_id = $1 AND role = 'assistant' ORDER BY seq",
        watch.chat_id,
    )
    last = "".join(p.get("text", "") for p in rows[-1]["parts"] if p["type"] == "text")
    assert "Changed since" in last and "Apple pie" in last
