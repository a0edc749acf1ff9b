"""A real SSE client for the chat stream (httpx-sse), and helpers to read UI parts."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import httpx
from httpx_sse import aconnect_sse


@dataclasses.dataclass
class Stream:
    status: int
    headers: httpx.Headers
    events: list[tuple[str, str]]  # (id, data) in order

    @property
    def parts(self) -> list[dict[str, Any]]:
        return [json.loads(data) for _, data in self.events if data != "[DONE]"]

    @property
    def types(self) -> list[str]:
        return [part["type"] for part in self.parts]

    @property
    def text(self) -> str:
        return "".join(p["delta"] for p in self.parts if p["type"] == "text-delta")


async def stream(
    base_url: str,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    json_body: Any = None,
    stop_after: int | None = None,
) -> Stream:
    """Read an SSE response to its end (or `stop_after` events, then hang up)."""
    events: list[tuple[str, str]] = []
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=60) as client,
        aconnect_sse(client, method, path, headers=headers or {}, json=json_body) as source,
    ):
        response = source.response
        if response.status_code != 200 or "text/event-stream" not in response.headers.get(
            "content-type", ""
        ):
            await response.aread()
            return Stream(response.status_code, response.headers, [])
        async for event in source.aiter_sse():
            if not event.data:
                # The server's keep-alive comment (": ping", every 15 s): httpx-sse yields it as
                # an empty "message" event (it keeps the last id), where the SSE spec
                # dispatches nothing. Every part Lookout sends has data.
                continue
            events.append((event.id, event.data))
            if stop_after is not None and len(events) >= stop_after:
                break
            if event.data == "[DONE]":
                break
    return Stream(response.status_code, response.headers, events)
