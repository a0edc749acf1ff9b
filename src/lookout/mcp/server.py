"""JSON-RPC for MCP: parse one message, dispatch a request, answer with the `mcp` package's types.

Stateless: every request carries what it needs (the Bearer key, the protocol version header), so
any web process can answer any request and there is no session id.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import lookout
from lookout import jsonin, textsafe
from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.mcp import calls, scopes, tools

if TYPE_CHECKING:  # mcp loads at the first MCP request, not in every web process (~0.7 s, ~25 MiB)
    import mcp.types as mcp_types
    import pydantic
    from mcp.types import jsonrpc

# The JSON-RPC 2.0 error codes (the spec's; mcp.types.jsonrpc names the same numbers).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

SUPPORTED_VERSIONS = ("2025-06-18", "2025-11-25")
# A request without MCP-Protocol-Version follows the rules of the version before the header.
HEADERLESS_VERSION = "2025-03-26"
INSTRUCTIONS = (
    "Lookout reads the live web: scrape pages you have URLs for, discover a site's pages or "
    "search the web. Calls cost credits from the workspace of the API key; a failed call is free."
)


class RpcError(Exception):
    """A JSON-RPC error answer; `http_status` is what the HTTP response carries."""

    def __init__(
        self, code: int, message: str, *, http_status: int = 200, data: Any = None
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.http_status, self.data = code, message, http_status, data

    def body(self, request_id: jsonrpc.RequestId | None) -> dict[str, Any]:
        from mcp.types import jsonrpc

        error = jsonrpc.ErrorData(code=self.code, message=self.message, data=self.data)
        reply = jsonrpc.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return reply.model_dump(mode="json", exclude_none=True) | {"id": request_id}


@dataclasses.dataclass(frozen=True)
class Context:
    services: Services
    principal: Principal
    request_id: str
    version: str
    # What an OAuth-connected agent was allowed (access/oauth_models.SCOPES); None: an API key.
    scopes: frozenset[str] | None = None


def parse(raw: bytes) -> jsonrpc.JSONRPCMessage:
    """One JSON-RPC message, or RpcError (-32700 not JSON, -32600 not a message, or a batch)."""
    import pydantic  # with mcp, at the first MCP request
    from mcp.types import jsonrpc

    try:
        data = jsonin.loads(raw)
    except jsonin.NotJson as exc:
        message = f"Parse error: the body is not JSON. {exc.message}"
        raise RpcError(PARSE_ERROR, message, http_status=400) from None
    if isinstance(data, list):
        message = "Invalid Request: batches are not supported; send one message per POST."
        raise RpcError(INVALID_REQUEST, message, http_status=400)
    if textsafe.unstorable(data) is not None:
        message = f"Invalid params: {textsafe.MESSAGE}"
        raise RpcError(INVALID_PARAMS, message, http_status=400)
    parsed: jsonrpc.JSONRPCMessage | None = None
    with contextlib.suppress(pydantic.ValidationError):
        parsed = jsonrpc.jsonrpc_message_adapter.validate_python(data, by_name=False)
    # A request whose id is not a string or an integer would otherwise pass as a notification.
    if parsed is None or (isinstance(parsed, jsonrpc.JSONRPCNotification) and "id" in data):
        message = "Invalid Request: expected a JSON-RPC 2.0 request, notification or response."
        raise RpcError(INVALID_REQUEST, message, http_status=400)
    return parsed


async def answer(request: jsonrpc.JSONRPCRequest, ctx: Context) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON-RPC response body) for one request."""
    from mcp.types import jsonrpc

    try:
        result = await _dispatch(request.method, request.params, ctx)
    except RpcError as exc:
        return exc.http_status, exc.body(request.id)
    reply = jsonrpc.JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)
    return 200, reply.model_dump(mode="json")


async def _dispatch(method: str, params: dict[str, Any] | None, ctx: Context) -> dict[str, Any]:
    import pydantic
    from mcp.types import methods

    handler = _HANDLERS.get(method)
    if handler is None:
        # server/discover lands here too: newer clients then fall back to initialize.
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
    version = _negotiate(params) if method == "initialize" else ctx.version
    try:
        request = methods.parse_client_request(method, ctx.version, params)
    except KeyError:
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}") from None
    except pydantic.ValidationError as exc:
        raise RpcError(INVALID_PARAMS, _params_problem(method, exc)) from None
    result = await handler(request, ctx)
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return methods.serialize_server_result(method, version, dumped)


def _negotiate(params: dict[str, Any] | None) -> str:
    """The client's version when we speak it, else our newest (the client then decides)."""
    wanted = (params or {}).get("protocolVersion")
    return wanted if wanted in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[-1]


def _params_problem(method: str, exc: pydantic.ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"] if part not in ("params",)) or "params"
    return f"Invalid params for {method}: {where}: {first['msg']}"


async def _initialize(request: Any, ctx: Context) -> mcp_types.Result:
    import mcp.types as mcp_types

    return mcp_types.InitializeResult(
        protocol_version=_negotiate({"protocolVersion": request.params.protocol_version}),
        capabilities=mcp_types.ServerCapabilities(
            tools=mcp_types.ToolsCapability(list_changed=False)
        ),
        server_info=mcp_types.Implementation(
            name="lookout", title="Lookout", version=lookout.__version__
        ),
        instructions=INSTRUCTIONS,
    )


async def _ping(request: Any, ctx: Context) -> mcp_types.Result:
    import mcp.types as mcp_types

    return mcp_types.EmptyResult()


async def _list_tools(request: Any, ctx: Context) -> mcp_types.Result:
    import mcp.types as mcp_types

    cursor = request.params.cursor if request.params else None
    try:
        size = ctx.services.settings.mcp_page_size
        found, next_cursor = tools.page(cursor, size, lambda name: scopes.allows(ctx.scopes, name))
    except tools.BadCursor:
        message = "Invalid params: this cursor did not come from tools/list; start without one."
        raise RpcError(INVALID_PARAMS, message) from None
    return mcp_types.ListToolsResult(tools=found, next_cursor=next_cursor)


async def _call_tool(request: Any, ctx: Context) -> mcp_types.Result:
    params = request.params
    if not scopes.allows(ctx.scopes, params.name) and tools.exists(params.name):
        return calls.failure(scopes.refusal(params.name), ctx.request_id)
    try:
        return await calls.call(
            ctx.services, ctx.principal, params.name, params.arguments, request_id=ctx.request_id
        )
    except calls.UnknownTool:
        message = f"Invalid params: there is no tool named {params.name!r}; tools/list names them."
        raise RpcError(INVALID_PARAMS, message) from None


Handler = Callable[[Any, Context], Awaitable["mcp_types.Result"]]
_HANDLERS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "tools/list": _list_tools,
    "tools/call": _call_tool,
}
