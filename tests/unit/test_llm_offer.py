"""What the LLM planner offers a turn, by the router's reading of the user's message (pure:
the intents below read no page and list no connector, so no server is needed)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

import pytest

from lookout.access.principals import Principal
from lookout.access.services import Services
from lookout.agent import llm_tools, router
from lookout.agent.context import TurnContext
from lookout.settings import Settings
from lookout.watches import tools as watch_tools

SETTINGS = Settings.from_env({"DATABASE_URL": "postgresql://x/y", "REDIS_URL": "redis://x",
                              "LOOKOUT_SECRET_KEY": "k" * 32,
                              "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:8000"})  # fmt: skip


def _ctx(source: str) -> TurnContext:
    nothing: Any = None  # no server: these turns must not reach one
    services = Services(db=nothing, redis=nothing, http=nothing, settings=SETTINGS)
    principal = Principal(kind="session", workspace_id=uuid.uuid4(), role="owner")
    ctx = TurnContext(services, principal, uuid.uuid4(), uuid.uuid4(), source,
                      emit=nothing, now=dt.datetime.now(dt.UTC))  # fmt: skip
    return dataclasses.replace(ctx, watches=watch_tools.for_turn(ctx))


@pytest.mark.parametrize(
    ("message", "offered"),
    [("stop watching", ["stop_watch"]), ("run it now", ["refresh_watch"]),
     ("https://example.com", [])],
)  # fmt: skip
async def test_a_control_request_gets_only_its_tool_and_an_ambiguous_one_none(
    message: str, offered: list[str]
) -> None:
    route = router.route(message)
    toolset = await llm_tools.for_turn(_ctx("user"), route, message)

    assert [spec["function"]["name"] for spec in toolset.specs] == offered
    assert toolset.verbs == {} and toolset.connectors == []


@pytest.mark.parametrize(
    ("message", "source", "offered"),
    [("what is on example.com right now?", "user", ()),
     ("watch example.com every day", "user", ("start_watch",)),
     ("watch example.com every day", "automation", ()),
     ("stop watching", "automation", ())],
)  # fmt: skip
def test_watch_tools_only_when_the_users_own_message_asks_and_never_scheduled(
    message: str, source: str, offered: tuple[str, ...]
) -> None:
    assert llm_tools.watch_tools(router.route(message), _ctx(source)) == offered
