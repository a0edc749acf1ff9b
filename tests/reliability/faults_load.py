"""Traffic for restart tests: REST verb calls and chat turns in loops, every answer recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
import uuid
from typing import Any

import aiohttp
import httpx
from httpx_sse import aconnect_sse

TURN_LIMIT_S = 45.0  # a turn's stream still open after this is reported as hung


@dataclasses.dataclass
class Answer:
    """One request: when it was sent and answered, its status, and what the client saw."""

    kind: str
    sent: float
    done: float
    status: int
    code: str | None = None  # the envelope's error code, or the stream's error part
    request_id: str | None = None
    call_id: str | None = None  # a verb call's ledger key (meta.call_id), made by the server
    charged: int = 0
    text: str | None = None  # a chat turn's question
    message_id: str | None = None  # a chat turn's answer id (the stream's start part)
    finished: bool = False  # a chat turn's stream ended with finish
    hung: bool = False


class Recorder:
    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.stop = asyncio.Event()

    def of(self, kind: str) -> list[Answer]:
        return [a for a in self.answers if a.kind == kind]

    def start(self, *loops: Any) -> list[asyncio.Task[None]]:
        return [asyncio.create_task(loop) for loop in loops]


async def rest_loop(recorder: Recorder, base: str, key: str, url: str, pause: float) -> None:
    """POST /v1/web/scrape again and again until told to stop."""
    headers = {"Authorization": f"Bearer {key}"}
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        while not recorder.stop.is_set():
            request_id = uuid.uuid4().hex
            sent = time.monotonic()
            answer = Answer("rest", sent, sent, 0, request_id=request_id)
            try:
                async with http.post(
                    base + "/v1/web/scrape", json={"url": url},
                    headers={**headers, "X-Request-Id": request_id},
                ) as response:  # fmt: skip
                    answer.status = response.status
                    body = await response.json(content_type=None)
                answer.code = (body.get("error") or {}).get("code")
                answer.charged = int((body.get("meta") or {}).get("credits_charged") or 0)
                answer.call_id = (body.get("meta") or {}).get("call_id")
            except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError) as exc:
                answer.code = f"client:{type(exc).__name__}"
            answer.done = time.monotonic()
            recorder.answers.append(answer)
            await asyncio.sleep(pause)


async def chat_loop(recorder: Recorder, base: str, key: str, url: str, pause: float) -> None:
    """A new chat, one turn in it, again and again; each turn's stream read to its end."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=base, timeout=30, headers=headers) as client:
        while not recorder.stop.is_set():
            text = f"what is on {url}?n={uuid.uuid4().hex[:8]}"
            answer = Answer("chat", time.monotonic(), 0.0, 0, text=text)
            try:
                await asyncio.wait_for(_turn(client, answer), TURN_LIMIT_S)
            except TimeoutError:
                answer.hung = True
            except (httpx.HTTPError, json.JSONDecodeError) as exc:
                answer.code = answer.code or f"client:{type(exc).__name__}"
            answer.done = time.monotonic()
            recorder.answers.append(answer)
            await asyncio.sleep(pause)


async def _turn(client: httpx.AsyncClient, answer: Answer) -> None:
    created = await client.post("/api/chats", json={})
    if created.status_code != 201:
        answer.status, answer.code = created.status_code, _code(created)
        return
    chat_id = created.json()["data"]["id"]
    path = f"/api/chats/{chat_id}/messages"
    async with aconnect_sse(client, "POST", path, json={"text": answer.text}) as source:
        answer.status = source.response.status_code
        if answer.status != 200:
            await source.response.aread()
            answer.code = _code(source.response)
            return
        async for event in source.aiter_sse():
            if event.data == "[DONE]":
                break
            part = json.loads(event.data)
            if part["type"] == "start":
                answer.message_id = part.get("messageId")
            elif part["type"] == "finish":
                answer.finished = True
            elif part["type"] == "error":
                answer.code = str(part.get("code", "error"))


def _code(response: httpx.Response) -> str | None:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return f"status:{response.status_code}"


async def stop(recorder: Recorder, tasks: list[asyncio.Task[None]], drain_s: float) -> None:
    """Stop the loops; requests in flight finish (or are counted hung by their own limit)."""
    recorder.stop.set()
    done, late = await asyncio.wait(tasks, timeout=drain_s)
    for task in late:
        task.cancel()
    for task in done:
        task.result()
