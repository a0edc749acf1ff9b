"""The rule-planner worker and the scheduler never load the LLM and MCP client libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys

LLM_AND_MCP = ("openai", "langchain_openai", "mcp")
ENV = {
    "DATABASE_URL": "postgresql://lookout@127.0.0.1:1/lookout",
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "LOOKOUT_SECRET_KEY": "test-secret-key-test-secret-key",
    "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:8000",
}


def _loaded_after(code: str) -> list[str]:
    """Which of LLM_AND_MCP a fresh interpreter holds after running `code`."""
    shown = f"print(json.dumps([m for m in {LLM_AND_MCP!r} if m in sys.modules]))"
    probe = f"{code}\nimport sys, json\n{shown}"
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LOOKOUT_LLM", "OPENAI"))}
    done = subprocess.run(
        [sys.executable, "-c", probe], env={**environ, **ENV}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_the_worker_and_the_scheduler_import_no_llm_or_mcp_client() -> None:
    # dramatiq loads lookout.worker, `lookout scheduler` lookout.scheduler (lookout.cli)
    assert _loaded_after("import lookout.worker, lookout.scheduler") == []


def test_a_model_used_loads_the_llm_client() -> None:
    # The check above can fail: building the chat model loads langchain_openai and openai
    code = (
        "import httpx, lookout.worker\n"
        "from lookout.agent import planner_llm\n"
        "from lookout.settings import Settings\n"
        "planner_llm.chat_model(Settings.from_env(), httpx.AsyncClient())"
    )
    assert _loaded_after(code) == ["openai", "langchain_openai"]
