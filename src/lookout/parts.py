"""Parts of the AI SDK UI message stream protocol v1 (what `useChat` reads)."""

from __future__ import annotations

from typing import Any

Part = dict[str, Any]
TERMINAL = frozenset({"finish", "error"})


def start(message_id: str, **metadata: Any) -> Part:
    part: Part = {"type": "start", "messageId": message_id}
    if metadata:
        part["messageMetadata"] = metadata
    return part


def text_start(text_id: str) -> Part:
    return {"type": "text-start", "id": text_id}


def text_delta(text_id: str, delta: str) -> Part:
    return {"type": "text-delta", "id": text_id, "delta": delta}


def text_end(text_id: str) -> Part:
    return {"type": "text-end", "id": text_id}


def tool_input(call_id: str, tool: str, arguments: dict[str, Any]) -> Part:
    return {
        "type": "tool-input-available",
        "toolCallId": call_id,
        "toolName": tool,
        "input": arguments,
    }


def tool_output(call_id: str, output: Any) -> Part:
    return {"type": "tool-output-available", "toolCallId": call_id, "output": output}


def data(name: str, value: dict[str, Any]) -> Part:
    return {"type": f"data-{name}", "data": value}


def error(code: str, message: str) -> Part:
    # errorText is what useChat shows; the code lets clients react (busy, insufficient_credits…)
    return {"type": "error", "errorText": message, "code": code}


def finish() -> Part:
    return {"type": "finish"}


def joined_deltas(stream: list[Part]) -> list[Part]:
    """The parts with each run of a text's consecutive deltas joined into one delta."""
    out: list[Part] = []
    for part in stream:
        last = out[-1] if out else None
        if (part["type"] == "text-delta" and last is not None and last["type"] == "text-delta"
                and last["id"] == part["id"]):  # fmt: skip
            out[-1] = {**last, "delta": last["delta"] + part["delta"]}
        else:
            out.append(part)
    return out


def to_message_parts(stream: list[Part]) -> list[Part]:
    """The stored (UIMessage) parts of a turn: text joined, tool calls with their outputs."""
    texts: dict[str, str] = {}
    order: list[tuple[str, str]] = []
    tools: dict[str, Part] = {}
    for part in stream:
        kind = part["type"]
        if kind == "text-start":
            texts[part["id"]] = ""
            order.append(("text", part["id"]))
        elif kind == "text-delta":
            texts[part["id"]] = texts.get(part["id"], "") + part["delta"]
        elif kind == "tool-input-available":
            tools[part["toolCallId"]] = {
                "type": f"tool-{part['toolName']}",
                "toolCallId": part["toolCallId"],
                "state": "input-available",
                "input": part["input"],
            }
            order.append(("tool", part["toolCallId"]))
        elif kind == "tool-output-available" and part["toolCallId"] in tools:
            tools[part["toolCallId"]].update(state="output-available", output=part["output"])
        elif kind.startswith("data-") or kind == "error":
            order.append(("raw", str(len(order))))
            tools[str(len(order) - 1)] = part
    return [_stored(kind, key, texts, tools) for kind, key in order]


def _stored(kind: str, key: str, texts: dict[str, str], tools: dict[str, Part]) -> Part:
    if kind == "text":
        return {"type": "text", "text": texts[key]}
    return tools[key]
