"""A new verb is one module plus its registration: `test.echo`, a verb defined and registered
here in the test, reaches the REST door, the MCP tool list and the chat's tools (the LLM
planner's) with no other file edited."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from aiohttp.test_utils import TestClient
from marshmallow import fields, validate

from lookout import app
from lookout.capabilities import registry
from lookout.db import repo
from lookout.routes import openapi
from lookout.schema import strict
from lookout.settings import Settings
from tests.integration import fake_openai as fake
from tests.integration.factories import TenantFactory, tenant_factory
from tests.integration.test_chat_llm import new_chat, say
from tests.integration.test_mcp_serve import session_for

__all__ = ["tenant_factory"]
fake_openai = fake.fake_openai


# --- the verb module: schemas, an executor, its registration -------------------------------
class EchoInputSchema(strict.StrictSchema):
    text = fields.String(required=True, validate=validate.Length(min=1, max=100))


class EchoOutputSchema(strict.StrictSchema):
    text = fields.String(required=True)


async def echo(data: dict[str, Any], ctx: registry.VerbContext) -> dict[str, Any]:
    return {"text": data["text"][::-1]}


def _one(_: dict[str, Any]) -> int:
    return 1


ECHO = registry.Verb(
    name="test.echo",
    title="Echo text backwards",
    description="Say the text back, reversed. 1 credit per call.",
    input_schema=EchoInputSchema,
    output_schema=EchoOutputSchema,
    execute=echo,
    price=1,
    max_units=_one,
    billable_units=_one,
    slow=False,
)
# -------------------------------------------------------------------------------------------


@pytest.fixture
def registered() -> Iterator[registry.Verb]:
    """test.echo registered for this test only (the doors are built after this runs). The
    OpenAPI document is built once per process from the verbs registered at import: forgotten
    around the test so that it is built with test.echo, and without it afterwards."""
    verb = registry.register(ECHO)
    openapi.document.cache_clear()
    try:
        yield verb
    finally:
        registry.REGISTRY.pop(verb.name, None)
        openapi.document.cache_clear()


@pytest.fixture
async def client(registered: registry.Verb, aiohttp_client: Any, settings: Settings) -> Any:
    return await aiohttp_client(app.create_app(settings))


async def test_a_registered_verb_is_served_over_rest(
    client: TestClient[Any, Any], tenant_factory: TenantFactory, db: asyncpg.Pool
) -> None:
    tenant = await tenant_factory(credits=3)

    listed = await (await client.get("/v1/verbs", headers=tenant.headers)).json()
    response = await client.post("/v1/test/echo", json={"text": "abc"}, headers=tenant.headers)
    refused = await client.post("/v1/test/echo", json={"txt": "abc"}, headers=tenant.headers)

    body = await response.json()
    assert response.status == 200, body
    assert body["data"] == {"text": "cba"} and body["meta"]["verb"] == "test.echo"
    assert body["meta"]["credits_charged"] == 1
    assert await repo.get_balance(db, workspace_id=tenant.workspace.id) == 2
    assert "test.echo" in [verb["name"] for verb in listed["data"]["verbs"]]
    assert refused.status == 400 and (await refused.json())["error"]["code"] == "invalid_input"
    spec = await (await client.get("/v1/openapi.json")).json()
    assert "/v1/test/echo" in spec["paths"]


async def test_a_registered_verb_is_an_mcp_tool(
    registered: registry.Verb,
    aiohttp_server: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
) -> None:
    tenant = await tenant_factory(credits=3)
    server = await aiohttp_server(app.create_app(settings))

    async with session_for(str(server.make_url("/mcp")), tenant.key) as session:
        listed = await session.list_tools()
        result = await session.call_tool("test_echo", {"text": "mcp"})

    tool = next(tool for tool in listed.tools if tool.name == "test_echo")
    assert tool.title == "Echo text backwards"
    assert tool.input_schema["properties"]["text"]["type"] == "string"
    assert result.is_error is False and result.structured_content == {"text": "pcm"}


def _read_echo_back(body: dict[str, Any]) -> fake.Step:
    return fake.Text([fake.tool_data(body)[-1]["text"]])


async def test_a_registered_verb_is_a_chat_tool(
    registered: registry.Verb,
    aiohttp_client: Any,
    settings: Settings,
    tenant_factory: TenantFactory,
    fake_openai: fake.FakeOpenAI,
) -> None:
    llm = settings.replace(llm_base_url=fake_openai.base_url, llm_model="fake-model")
    chat_client = await aiohttp_client(app.create_app(llm))
    tenant = await tenant_factory(credits=3)
    chat_id = await new_chat(chat_client, tenant)
    fake_openai.script = [fake.ToolCall("test_echo", {"text": "chat"}), _read_echo_back]

    result = await say(chat_client, tenant, chat_id, "what is on https://example.com right now?")

    assert "test_echo" in fake_openai.tool_names(0)
    offered = next(
        tool for tool in fake_openai.requests[0]["tools"] if tool["function"]["name"] == "test_echo"
    )
    assert offered["function"]["description"].startswith("Echo text backwards. Say the text")
    assert result.parts[result.types.index("tool-input-available")]["toolName"] == "test_echo"
    assert result.text == "tahc"
