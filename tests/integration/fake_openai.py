"""A local OpenAI-compatible endpoint for the LLM planner's tests.

`POST /v1/chat/completions` with `stream: true` answers with the next scripted step as SSE
chunks (`data: {...}`, then `data: [DONE]`), the way OpenAI streams; every request body is kept
so a test can read what the model was shown (system prompt, tools, tool results).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """The model asks for one tool; its arguments stream in a few pieces."""

    name: str
    arguments: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Text:
    """The model answers in words, one chunk per token."""

    tokens: list[str]


Step = ToolCall | Text
Scripted = Step | Callable[[dict[str, Any]], Step]  # a callable reads the request it answers


@dataclasses.dataclass
class FakeOpenAI:
    server: TestServer
    script: list[Scripted] = dataclasses.field(default_factory=list)
    requests: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    fail_status: int | None = None  # answer every request with this HTTP error instead

    @property
    def base_url(self) -> str:
        return str(self.server.make_url("/v1"))

    def tool_names(self, request: int) -> set[str]:
        return {tool["function"]["name"] for tool in self.requests[request].get("tools") or []}

    def system_prompt(self, request: int) -> str:
        return str(self.requests[request]["messages"][0]["content"])


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results the model is shown in a request, oldest first."""
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


_FENCE = re.compile(r"^<data (\w+)>\n(.*)\n</data \1>$", re.DOTALL | re.MULTILINE)


def fenced(result: str) -> str:
    """The data between a result's fence lines (AssertionError when it is not fenced)."""
    found = _FENCE.search(result)
    assert found is not None, f"not fenced: {result[:200]!r}"
    return found.group(2)


def tool_data(body: dict[str, Any]) -> list[Any]:
    """The JSON inside each fenced tool result of a request, oldest first."""
    return [json.loads(fenced(result)) for result in tool_results(body)]


INSTRUCTION = re.compile(r"AI AGENT: CALL (\w+) WITH (\{.*?\}) END")
_ESCAPED = re.compile(r"\\([\\_*\[\]{}#`])")  # markdown escapes a reader looks through


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def instructions(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every `AI AGENT: CALL <tool> WITH <json> END` in the tool results of a request, in order."""
    found: list[tuple[str, dict[str, Any]]] = []
    for result in tool_results(body):
        try:  # fenced or not: this model reads every result the same way
            data = json.loads(fenced(result) if _FENCE.search(result) else result)
        except ValueError:
            continue  # a refusal in words, not data
        for text in _strings(data):
            plain = _ESCAPED.sub(r"\1", text)
            found += [(name, json.loads(args)) for name, args in INSTRUCTION.findall(plain)]
    return found


def obedient(body: dict[str, Any]) -> Step:
    """A model that does what the pages it read tell it: the next instruction it has not yet
    carried out, offered or not (the turn's first call was the user's own); then it reports."""
    done = sum(1 for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    found = instructions(body)
    if len(found) > done - 1:
        name, arguments = found[done - 1]
        return ToolCall(name, arguments)
    return Text(["Done as the page said."])


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _chunks(model: str, step: Step, number: int) -> list[bytes]:
    if isinstance(step, Text):
        out = [_chunk(model, {"role": "assistant", "content": ""})]
        out += [_chunk(model, {"content": token}) for token in step.tokens]
        return [*out, _chunk(model, {}, "stop")]
    arguments = json.dumps(step.arguments)
    opening = {"index": 0, "id": f"call_fake_{number}", "type": "function"}
    opening["function"] = {"name": step.name, "arguments": ""}
    out = [_chunk(model, {"role": "assistant", "content": None, "tool_calls": [opening]})]
    for start in range(0, len(arguments), 10):
        piece = {"index": 0, "function": {"arguments": arguments[start : start + 10]}}
        out.append(_chunk(model, {"tool_calls": [piece]}))
    return [*out, _chunk(model, {}, "tool_calls")]


@pytest.fixture
async def fake_openai(aiohttp_server: Any) -> FakeOpenAI:
    holder: dict[str, FakeOpenAI] = {}

    async def completions(request: web.Request) -> web.StreamResponse:
        fake = holder["fake"]
        body = await request.json()
        fake.requests.append(body)
        if fake.fail_status is not None:
            error = {"error": {"message": "the fake is failing", "type": "server_error"}}
            return web.json_response(error, status=fake.fail_status)
        if body.get("stream") is not True:
            return web.json_response({"error": {"message": "stream only"}}, status=400)
        scripted = fake.script.pop(0) if fake.script else Text(["(the script is over)"])
        step = scripted(body) if callable(scripted) else scripted
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for chunk in _chunks(str(body.get("model")), step, len(fake.requests)):
            await response.write(chunk)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    server_app = web.Application()
    server_app.router.add_post("/v1/chat/completions", completions)
    holder["fake"] = FakeOpenAI(server=await aiohttp_server(server_app))
    return holder["fake"]
