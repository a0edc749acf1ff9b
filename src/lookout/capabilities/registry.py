"""The capability registry: every verb as data, the single source every door is generated from."""

from __future__ import annotations

import copy
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import aiohttp
import marshmallow
import redis.asyncio as aioredis
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from lookout import errors
from lookout.settings import Settings

if TYPE_CHECKING:
    from lookout.capabilities import browser

logger = logging.getLogger(__name__)

_REF_PREFIX = "#/components/schemas/"


@dataclasses.dataclass(frozen=True)
class VerbContext:
    """What an executor may use besides its input."""

    http: aiohttp.ClientSession
    settings: Settings
    progress: Callable[[int, int], Awaitable[None]]
    cancelled: Callable[[], Awaitable[bool]] | None = None
    # What every process of the deployment shares (a provider's pace); the doors pass it.
    redis: aioredis.Redis | None = None
    # A worker process's browser (capabilities/browser.py); the web process has none.
    browser: browser.Pool | None = None
    # Keeps a file of a job's result (content type, bytes) → {"url", "expires_at"}; jobs only.
    save_artifact: Callable[[str, bytes], Awaitable[dict[str, Any]]] | None = None
    # Reserves this many more billable units for the call (a cost found while running: a page
    # that needs rendering), or raises InsufficientCredits with nothing taken (access.metering).
    # None: the caller does not meter (a bench, a test); every door passes one.
    top_up: Callable[[int], Awaitable[None]] | None = None

    async def should_stop(self) -> bool:
        """True once a job has been cancelled; executors poll it between units of work."""
        return self.cancelled is not None and await self.cancelled()


# What a caller that picks verbs by purpose (the rule planner, a watch's estimate) may ask for:
# a verb says which of these it serves (Verb.serves) and turns the ask into its input (Verb.fill).
READ = "read"  # read these pages now (urls; structured: their structured data too)
MAP = "map"  # list a site's pages (urls[0], limit)
SEARCH = "search"  # search the web (query, limit)
PLACES = "places"  # places for a query (query, near, limit)
REVIEWS = "reviews"  # a place's reviews (ref, limit)


@dataclasses.dataclass(frozen=True)
class Ask:
    """A purpose in no verb's terms; the verb that serves `need` fills its own input from it."""

    need: str
    urls: tuple[str, ...] = ()
    query: str = ""
    near: str | None = None
    ref: str = ""
    limit: int | None = None
    structured: bool = False


class NeedsWorker(Exception):
    """Control flow, not failure: this call needs what only a worker process has (a browser,
    a job to keep artifacts under); the adapter runs it again as a job, reserving
    `extra_units` more than the call's base price (the pages already found to need rendering)."""

    def __init__(self, message: str, *, extra_units: int = 0) -> None:
        super().__init__(message)
        self.extra_units = extra_units


@dataclasses.dataclass(frozen=True)
class Verb:
    name: str
    title: str
    description: str
    input_schema: type[marshmallow.Schema]
    output_schema: type[marshmallow.Schema]
    execute: Callable[[dict[str, Any], VerbContext], Awaitable[dict[str, Any]]]
    price: int
    max_units: Callable[[dict[str, Any]], int]
    billable_units: Callable[[dict[str, Any]], int]
    slow: Callable[[dict[str, Any]], bool] | bool
    read_only: bool = True
    idempotent: bool = True
    open_world: bool = True
    # How its output reads, so the agent words and compares a result by what it is, never by
    # the verb's name: "pages" (each page's content), "links" or "places" (lists of items whose
    # changes a watch reports), "reviews", or "data" (shown as it is).
    reads_as: str = "data"
    # The Asks it serves (READ, MAP…), and how it fills its input from one of them.
    serves: frozenset[str] = frozenset()
    fill: Callable[[Ask], dict[str, Any]] | None = None
    # For a verb that reads pages: the URLs an input reads, and the input keys that make it
    # render them in a browser (a chat keeps rendering a page that needed one).
    urls_of: Callable[[dict[str, Any]], list[str]] | None = None
    keep_rendering: Mapping[str, Any] | None = None

    @property
    def tool_name(self) -> str:
        """Its name as a tool (MCP, chat): `web_scrape` for web.scrape."""
        return self.name.replace(".", "_")

    @property
    def lists_items(self) -> bool:
        """Whether its output is a list of items (links, places) compared from look to look."""
        return self.reads_as in ITEM_LISTS

    def is_slow(self, data: dict[str, Any]) -> bool:
        """Whether this validated input must run as a job."""
        return self.slow(data) if callable(self.slow) else self.slow


ITEM_LISTS = frozenset({"links", "places"})
REGISTRY: dict[str, Verb] = {}


def reads_as(name: str) -> str:
    """How the output of the verb called `name` reads ("data" for an unknown name)."""
    verb = REGISTRY.get(name)
    return verb.reads_as if verb is not None else "data"


def serving(need: str) -> Verb:
    """The verb that serves `need` (the first by name), or NotFound."""
    for verb in all_verbs():
        if need in verb.serves and verb.fill is not None:
            return verb
    raise errors.NotFound(f"No verb here can {need}.", need=need)


def asked(ask: Ask) -> tuple[Verb, dict[str, Any]]:
    """(the verb that serves `ask`, its input filled from it)."""
    verb = serving(ask.need)
    assert verb.fill is not None  # serving() only returns verbs that fill
    return verb, verb.fill(ask)


def for_tool(tool_name: str) -> Verb | None:
    """The verb a tool name (`web_scrape`) stands for, or None."""
    return next((verb for verb in all_verbs() if verb.tool_name == tool_name), None)


def register(verb: Verb) -> Verb:
    """Add `verb`; registering a different verb under a taken name is a programming error."""
    existing = REGISTRY.get(verb.name)
    if existing is not None and existing is not verb:
        raise ValueError(f"a verb named {verb.name!r} is already registered")
    REGISTRY[verb.name] = verb
    return verb


def get(name: str) -> Verb:
    """The verb called `name`, or NotFound."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise errors.NotFound(
            f"There is no verb named {name!r}; GET /v1/verbs lists them.", verb=name
        ) from None


def all_verbs() -> list[Verb]:
    return sorted(REGISTRY.values(), key=lambda verb: verb.name)


@functools.cache
def _instance(schema: type[marshmallow.Schema]) -> marshmallow.Schema:
    """One instance per schema class: building one deep-copies every field (~5 % of a scheduled
    turn's CPU went there). An instance keeps no per-call state and may be used many times."""
    return schema()


def validate_input(verb: Verb, raw: object) -> dict[str, Any]:
    """`raw` loaded through the verb's Input schema, or InvalidInput with field-level details."""
    if not isinstance(raw, Mapping):
        raise errors.InvalidInput(
            f"The input of {verb.name} must be a JSON object.",
            fields={"_schema": ["Expected a JSON object."]},
        )
    try:
        loaded: dict[str, Any] = _instance(verb.input_schema).load(raw)
    except marshmallow.ValidationError as exc:
        fields: dict[str, Any] = exc.normalized_messages()  # type: ignore[no-untyped-call]
        raise errors.InvalidInput(_summary(verb, fields), fields=fields) from None
    return loaded


def _summary(verb: Verb, fields: Mapping[str, Any]) -> str:
    name, problem = next(iter(fields.items()))
    while isinstance(problem, Mapping):
        key, problem = next(iter(problem.items()))
        name = f"{name}.{key}"
    shown = str(problem[0] if isinstance(problem, list) and problem else problem).rstrip(".")
    where = "" if name == "_schema" else f"{name}: "
    return f"The input of {verb.name} is not valid ({where}{shown})."


def dump_output(verb: Verb, data: Mapping[str, Any]) -> dict[str, Any]:
    """Serialize an executor's result; a result that breaks its own schema is our bug (500)."""
    schema = _instance(verb.output_schema)
    dumped: dict[str, Any] = schema.dump(data)
    problems = schema.validate(dumped)
    if problems:
        logger.error("%s produced output its schema rejects: %s", verb.name, problems)
        raise errors.LookoutError(f"{verb.name} produced an invalid result.")
    return dumped


def input_json_schema(verb: Verb) -> dict[str, Any]:
    """A self-contained JSON Schema (no $ref) of the verb's input, for OpenAPI, MCP and LLMs."""
    return copy.deepcopy(_json_schema(verb.input_schema))


def output_json_schema(verb: Verb) -> dict[str, Any]:
    """A self-contained JSON Schema (no $ref) of the verb's output."""
    return copy.deepcopy(_json_schema(verb.output_schema))


def json_schema_of(schema: type[marshmallow.Schema]) -> dict[str, Any]:
    """A self-contained JSON Schema of any marshmallow schema (a route's body, for OpenAPI)."""
    return copy.deepcopy(_json_schema(schema))


@functools.cache
def _json_schema(schema: type[marshmallow.Schema]) -> dict[str, Any]:
    plugin = MarshmallowPlugin()
    spec = APISpec(title="lookout", version="1", openapi_version="3.1.0", plugins=[plugin])
    name = schema.__name__.removesuffix("Schema")
    spec.components.schema(name, schema=schema)
    components = spec.to_dict()["components"]["schemas"]
    inlined: dict[str, Any] = _inline(components[name], components, (name,))
    return inlined


def _inline(node: Any, components: Mapping[str, Any], trail: tuple[str, ...]) -> Any:
    """`node` with every component $ref replaced by the component itself."""
    if isinstance(node, list):
        return [_inline(item, components, trail) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        target = ref.removeprefix(_REF_PREFIX)
        if target in trail:
            raise ValueError(f"schema {trail[0]} is recursive through {target}; cannot inline")
        return _inline(components[target], components, (*trail, target))
    return {key: _inline(value, components, trail) for key, value in node.items()}
