"""Which tools an OAuth-connected agent may use: `verbs:read` runs the read-only verbs (and
spends credits), `jobs:read` looks up the jobs they started. An API key may use every tool."""

from __future__ import annotations

from lookout import errors
from lookout.mcp import tools

VERBS = "verbs:read"
JOBS = "jobs:read"


def needed(name: str) -> str | None:
    """The scope tool `name` needs; None when no scope grants it (a verb that writes)."""
    if name == tools.JOBS_GET:
        return JOBS
    verb = tools.verb_for(name)
    return VERBS if verb is not None and verb.read_only else None


def allows(granted: frozenset[str] | None, name: str) -> bool:
    if granted is None:
        return True
    scope = needed(name)
    return scope is not None and scope in granted


def refusal(name: str) -> errors.Forbidden:
    scope = needed(name)
    if scope is None:
        return errors.Forbidden(f"{name} cannot be used through an OAuth connection.")
    return errors.Forbidden(
        f"This connection was not allowed to use {name}: it needs the {scope} permission. "
        "Connect the agent again and allow it."
    )
