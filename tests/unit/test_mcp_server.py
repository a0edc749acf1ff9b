"""JSON-RPC parsing for the MCP door, bounded text, and connector tool names."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp.types import jsonrpc

from lookout.mcp import calls, server, toolbox


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, jsonrpc.JSONRPCRequest),
        ({"jsonrpc": "2.0", "id": "a", "method": "ping", "params": {}}, jsonrpc.JSONRPCRequest),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, jsonrpc.JSONRPCNotification),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, jsonrpc.JSONRPCResponse),
    ],
)
def test_messages_are_parsed_to_their_kind(message: dict[str, Any], kind: type) -> None:
    assert isinstance(server.parse(json.dumps(message).encode()), kind)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{", jsonrpc.PARSE_ERROR),
        (b"\xff", jsonrpc.PARSE_ERROR),
        (b"[]", jsonrpc.INVALID_REQUEST),
        (b"{}", jsonrpc.INVALID_REQUEST),
        (b"42", jsonrpc.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', jsonrpc.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', jsonrpc.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', jsonrpc.INVALID_REQUEST),
    ],
)
def test_bad_bodies_are_json_rpc_errors_at_400(raw: bytes, code: int) -> None:
    with pytest.raises(server.RpcError) as raised:
        server.parse(raw)

    assert (raised.value.code, raised.value.http_status) == (code, 400)
    assert raised.value.body(None)["id"] is None


def test_text_within_the_limit_is_untouched_and_longer_text_is_cut_with_a_note() -> None:
    assert calls.bounded("short", 100, "hint") == "short"

    cut = calls.bounded("x" * 5000, 1000, "Ask for less.")

    assert len(cut) == 1000
    assert cut.startswith("x" * 100) and cut.endswith("Ask for less.]")
    assert "Cut at 1,000 of 5,000 characters" in cut


@pytest.mark.parametrize(
    ("connector", "tool"),
    [("GitHub", "search_issues"), ("my server!", "do.thing"), ("é", "ü"), ("a" * 80, "b" * 80)],
)
def test_connector_tool_names_are_safe_for_models(connector: str, tool: str) -> None:
    name = toolbox.qualified_name(connector, tool)

    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name)


def test_long_names_that_share_a_prefix_stay_distinct() -> None:
    first = toolbox.qualified_name("c" * 60, "tool_one")
    second = toolbox.qualified_name("c" * 60, "tool_two")

    assert first != second and len(first) == len(second) == 64
