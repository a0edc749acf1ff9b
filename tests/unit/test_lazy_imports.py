"""The rule-planner processes (web, worker, scheduler) never load the LLM and MCP client libraries,
nor the readers only some calls need (extruct and its RDF/microformat stack)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# httpx2 and httpcore2: what the mcp client speaks through (lookout.mcp.pinned).
LLM_AND_MCP = ("openai", "langchain_openai", "mcp", "httpx2", "httpcore2")
# Loaded where first used: an MCP request (mcp, mcp_types, and pydantic: 3.3 MiB RSS), a
# structured-data read (extruct, which brings rdflib, mf2py, html5lib), an Atom feed (feedgen), a
# page converted (html_to_markdown) and read (trafilatura: pages over 2 KB are read in reader
# processes, which preload it; lxml, which it parses with, ~4 MiB RSS, and selectolax, the page's
# own parser, ~2 MiB, come with it).
AT_FIRST_USE = (
    "mcp", "mcp_types", "pydantic", "extruct", "rdflib", "mf2py", "html5lib", "feedgen",
    "html_to_markdown", "trafilatura", "lxml", "selectolax",
)  # fmt: skip
ENV = {
    "DATABASE_URL": "postgresql://lookout@127.0.0.1:1/lookout",
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "LOOKOUT_SECRET_KEY": "test-secret-key-test-secret-key",
    "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:8000",
}


def _loaded_after(code: str, names: tuple[str, ...] = LLM_AND_MCP) -> list[str]:
    """Which of `names` a fresh interpreter holds after running `code`."""
    shown = f"print(json.dumps([m for m in {names!r} if m in sys.modules]))"
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
    # (langchain_openai brings httpx2 too)
    assert _loaded_after(code) == ["openai", "langchain_openai", "httpx2", "httpcore2"]


# The web process as `lookout web` builds it (cli.cmd_web), its routes and the graph included.
WEB = (
    "from lookout import app\n"
    "from lookout.settings import Settings\n"
    "app.create_app(Settings.from_env(), runs_actors=False)"
)


def test_the_web_process_loads_no_llm_mcp_or_structured_data_library_at_start() -> None:
    assert _loaded_after(WEB, LLM_AND_MCP + AT_FIRST_USE) == []


# periodiq (with pendulum) for the periodic actors' option, read by the processes running them;
# croniter (with dateutil) for cadences and ticks: ~3 MiB RSS of `lookout web` at its start.
SCHEDULING = ("periodiq", "pendulum", "croniter", "dateutil")


def test_the_web_process_loads_no_scheduling_library_at_start() -> None:
    assert _loaded_after(WEB, SCHEDULING) == []


def test_the_workers_periodic_actors_carry_periodiqs_option() -> None:
    # The check above can fail: a worker's broker has periodiq's middleware and its periodic
    # actors the option it reads (its skip of a late tick), and a cadence read loads croniter
    code = (
        "import dramatiq, lookout.worker\n"
        "from lookout import periodic\n"
        "broker = dramatiq.get_broker()\n"
        "assert 'periodic' in broker.actor_options\n"
        "assert broker.get_actor(periodic.SWEEP_EXPIRED.actor_name).options['periodic']\n"
        "import datetime as dt\n"
        "from lookout.watches import schedule\n"
        "schedule.validate('0 * * * *', 'UTC', min_minutes=5, now=dt.datetime.now(dt.UTC))"
    )
    assert _loaded_after(code, SCHEDULING) == list(SCHEDULING)


def test_lookout_web_sets_up_a_broker_that_only_sends_and_dev_serve_one_that_runs_actors() -> None:
    # The commands themselves (cli.cmd_web; `lookout dev-serve` runs a worker in its process),
    # with aiohttp's run_app made to return at once
    code = (
        "from aiohttp import web\n"
        "web.run_app = lambda *args, **kwargs: None\n"
        "from lookout import cli\n"
        "cli.cmd_{}(None)\n"
        "import dramatiq\n"
        "assert ('periodic' in dramatiq.get_broker().actor_options) is {}"
    )
    assert _loaded_after(code.format("web", False), SCHEDULING[:2]) == []
    assert _loaded_after(code.format("dev_serve", True), SCHEDULING[:2]) == list(SCHEDULING[:2])


def test_a_broker_that_only_sends_is_not_taken_for_a_workers() -> None:
    # Its periodic actors were declared without periodiq's option: a worker's setup in the
    # same process is refused, not given that broker
    code = (
        f"{WEB}\n"
        "from lookout import broker\n"
        "try:\n"
        "    broker.setup(Settings.from_env())\n"
        "except RuntimeError as exc:\n"
        "    print('refused:', exc)\n"
        "else:\n"
        "    raise SystemExit('a broker that only sends was taken for a worker')"
    )
    assert _loaded_after(code, SCHEDULING) == []


def test_the_web_process_loads_no_process_reader_until_a_page_renders() -> None:
    # psutil (~0.8 MiB RSS) finds and measures the browser's renderers, in workers only
    assert _loaded_after(WEB, ("psutil",)) == []
    # The check above can fail: a renderer memory sweep loads it
    sweep = "from lookout.capabilities import browser_memory\nbrowser_memory.Watchdog(64).sweep()"
    code = f"{WEB}\n{sweep}"
    assert _loaded_after(code, ("psutil",)) == ["psutil"]


def test_the_first_use_of_each_loads_its_library() -> None:
    # The check above can fail: the MCP door's parse loads mcp, a structured read extruct, a feed
    # feedgen, a page converted to markdown html_to_markdown and read trafilatura
    code = (
        f"{WEB}\n"
        "import datetime, uuid\n"
        "from lookout.mcp import server\n"
        "from lookout.capabilities import extract, structured\n"
        "from lookout.watches import atom\n"
        'server.parse(b\'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\')\n'
        "structured.read('<html><head><title>t</title></head></html>', 'http://127.0.0.1/')\n"
        "feed = atom.Feed(uuid.uuid4(), 'f', 's', None, None, [])\n"
        "atom.document(feed, now=datetime.datetime.now(datetime.UTC))\n"
        "page = b'<html><body><article><h1>Title</h1><p>' + b'word ' * 200 + b'</p></article>'\n"
        "assert extract.extract(page, url='http://127.0.0.1/', formats=('markdown',)).markdown"
    )
    assert _loaded_after(code, AT_FIRST_USE) == list(AT_FIRST_USE)


def test_a_connector_used_loads_the_mcp_client_and_its_http_client() -> None:
    # The checks above can fail: a connector's exchange (here refused by the SSRF guard before a
    # byte is sent) loads mcp, which brings httpx2; the guarded client it then makes, httpcore2
    code = (
        "import asyncio, sys, lookout.worker\n"
        "from lookout import errors\n"
        "from lookout.mcp import pinned, remote\n"
        "from lookout.settings import Settings\n"
        "settings = Settings.from_env()\n"
        "async def use():\n"
        "    try:\n"
        "        await remote.call_tool('http://127.0.0.1:9/mcp', {}, settings, 't', {})\n"
        "    except errors.LookoutError:\n"
        "        pass\n"
        "    assert 'httpcore2' not in sys.modules\n"
        "    pinned.client(settings, {})\n"
        "asyncio.run(use())"
    )
    assert _loaded_after(code) == ["mcp", "httpx2", "httpcore2"]


# LangGraph and what it brings (LangChain, LangSmith, psycopg for its saver): ~50 MiB RSS of a
# process; loaded by the first chat turn (agent.graph.OnDemand), not by a process's start.
AGENT = ("langgraph", "langchain_core", "langsmith", "psycopg", "psycopg_pool")


def test_no_process_loads_langgraph_before_its_first_turn() -> None:
    assert _loaded_after(WEB, AGENT) == []
    assert _loaded_after("import lookout.worker, lookout.scheduler", AGENT) == []


def test_building_the_graph_loads_langgraph() -> None:
    # The check above can fail: what a first turn makes (the saver's class, the graph) loads them
    code = (
        f"{WEB}\n"
        "from lookout.agent import graph\n"
        "from lookout.db import checkpointer\n"
        "checkpointer.saver_class()\n"
        "graph.build(None)"
    )
    assert _loaded_after(code, AGENT) == list(AGENT)


# cryptography's Rust extension (~6 MiB RSS a process) and joserfc's key sets (what
# authlib.oauth2.rfc7591 brings): loaded by the first secret sealed or opened (access.secrets) or
# the first OAuth server made (a registration, a client's metadata checked), not by a process's
# start. redis-py imports the bare `cryptography` package to see whether it is installed, which
# loads no extension, so the modules that do are named.
SEALING = ("cryptography.hazmat.bindings._rust", "cryptography.hazmat.primitives.ciphers.aead")
RFC7591 = ("authlib.oauth2.rfc7591", "joserfc.jwk", "cryptography.hazmat.bindings._rust")


def test_no_process_loads_cryptography_rfc7591_or_a_parser_at_start() -> None:
    worker = "import lookout.worker, lookout.scheduler"
    assert _loaded_after(worker, SEALING + RFC7591 + ("lxml", "selectolax")) == []
    assert _loaded_after(WEB, SEALING + RFC7591) == []


def test_a_secret_sealed_loads_the_primitives_and_opens_again() -> None:
    # The check above can fail: sealing loads them, and what is sealed opens with the same key
    code = (
        "import lookout.worker\n"
        "from lookout.access import secrets\n"
        "sealed = secrets.seal('k' * 32, 'test', b'plain', context=b'row')\n"
        "assert secrets.unseal('k' * 32, 'test', sealed, context=b'row') == b'plain'"
    )
    assert _loaded_after(code, SEALING) == list(SEALING)


def test_client_metadata_checked_loads_rfc7591_and_keeps_our_checks() -> None:
    # The check above can fail: checking a client's metadata loads Authlib's RFC 7591 claims,
    # with our checks before them (a plain-http redirect URI to a public host is refused)
    code = (
        f"{WEB}\n"
        "from lookout.access import oauth_clients, oauth_server\n"
        "meta = oauth_server.metadata('https://lookout.example')\n"
        "good = {'redirect_uris': ['https://app.example/cb'], 'client_name': 'app'}\n"
        "assert oauth_clients.check(good, meta)['redirect_uris'] == ['https://app.example/cb']\n"
        "try:\n"
        "    oauth_clients.check({'redirect_uris': ['http://app.example/cb']}, meta)\n"
        "except oauth_clients.InvalidClientMetadataError as exc:\n"
        "    assert exc.error == 'invalid_client_metadata', exc.error\n"
        "else:\n"
        "    raise AssertionError('an http redirect URI was accepted')"
    )
    assert _loaded_after(code, RFC7591) == list(RFC7591)


def test_a_question_ranked_for_a_turn_loads_no_numpy_in_the_process() -> None:
    # BM25 (bm25s, numpy) is the readers' (agent.reading.answer_in_reader); in process it loads
    code = (
        "import asyncio, lookout.worker\n"
        "from lookout.agent import reading\n"
        "from lookout.capabilities import readers\n"
        "from lookout.settings import Settings\n"
        "page = {'url': 'https://s.example/', 'title': 'S',\n"
        "        'markdown': '# S\\n\\nWe sell tea.\\n\\n## Hours\\n\\nOpen at nine.'}\n"
        "async def ask():\n"
        "    settings = Settings.from_env()\n"
        "    said = await reading.answer_in_reader('when do you open?', page, settings)\n"
        "    assert 'Open at nine' in said, said\n"
        "    readers.close()\n"
        "asyncio.run(ask())\n"
        "import sys\n"
        "assert 'numpy' not in sys.modules\n"
        "reading.answer('when do you open?', page)"
    )
    assert _loaded_after(code, ("numpy", "bm25s")) == ["numpy", "bm25s"]
