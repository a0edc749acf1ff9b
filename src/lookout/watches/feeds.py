"""Feeds: an Atom feed of what the watches found (a change, or a condition that became true),
per workspace and per watch, behind a secret URL (like changedetection.io's RSS). The token is
made here, shown once, kept as SHA-256, rotated in place and revoked; whoever holds the URL
reads the feed, nobody else."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import uuid
from typing import Any

import asyncpg

from lookout import errors
from lookout.access.principals import Principal
from lookout.agent import conditions
from lookout.db import feeds as feeds_db
from lookout.notify import message
from lookout.settings import Settings
from lookout.watches import atom, service

TOKEN_PREFIX = "lkf_"
MAX_TOKEN = 100
MAX_ENTRIES = 50
PATH = "/feeds/"


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def url_of(settings: Settings, token: str) -> str:
    return f"{settings.public_url.rstrip('/')}{PATH}{token}"


async def create(
    db: asyncpg.Pool, principal: Principal, automation_id: uuid.UUID | None
) -> tuple[feeds_db.FeedToken, str]:
    """Make the scope's feed URL, or rotate it (the old URL stops at once): (feed, token)."""
    principal.require("editor")
    if automation_id is not None:
        await service.get(db, principal, automation_id)  # another workspace's watch: not found
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    found = await feeds_db.upsert_feed_token(
        db, workspace_id=principal.workspace_id, automation_id=automation_id,
        token_hash=digest(token), prefix=token[:10], created_by=principal.user_id,
    )  # fmt: skip
    return found, token


async def list_all(db: asyncpg.Pool, principal: Principal) -> list[feeds_db.FeedToken]:
    return await feeds_db.list_feed_tokens(db, workspace_id=principal.workspace_id)


async def revoke(db: asyncpg.Pool, principal: Principal, feed_id: uuid.UUID) -> None:
    principal.require("editor")
    if not await feeds_db.delete_feed_token(
        db, feed_id=feed_id, workspace_id=principal.workspace_id
    ):
        raise errors.NotFound("No such feed in this workspace.")


def view(feed: feeds_db.FeedToken) -> dict[str, Any]:
    """What members see of a feed: never its token (only its first characters)."""
    return {
        "id": feed.id,
        "watch_id": feed.automation_id,
        "prefix": feed.prefix,
        "created_at": feed.created_at,
        "rotated_at": feed.rotated_at,
        "last_used_at": feed.last_used_at,
    }


async def render(db: asyncpg.Pool, settings: Settings, token: str) -> bytes:
    """The Atom document the token opens; NotFound for an unknown, rotated or revoked token."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > MAX_TOKEN:
        raise _gone()
    feed = await feeds_db.use_feed_token(db, token_hash=digest(token))
    if feed is None:
        raise _gone()
    runs = await feeds_db.list_changed_runs(
        db, workspace_id=feed.workspace_id, automation_id=feed.automation_id, limit=MAX_ENTRIES
    )
    name = await feeds_db.get_workspace_name(db, workspace_id=feed.workspace_id) or "Lookout"
    home = settings.public_url.rstrip("/") + "/" if settings.public_url else None
    document = atom.Feed(
        id=feed.id, title=_title(name, feed, runs), subtitle="What Lookout's watches found",
        self_url=url_of(settings, token) if settings.public_url else None, home_url=home,
        entries=[_entry(settings, run) for run in runs],
    )  # fmt: skip
    return atom.document(document, now=dt.datetime.now(dt.UTC))


def _title(name: str, feed: feeds_db.FeedToken, runs: list[feeds_db.ChangedRun]) -> str:
    if feed.automation_id is None:
        return f"Lookout · {name}: what changed"
    question = str(runs[0].action.get("message", "")) if runs else "one watch"
    return f"Lookout · {name}: {question[:120]}"


def _entry(settings: Settings, run: feeds_db.ChangedRun) -> atom.Entry:
    """A run that found a change says it; one whose condition became true says that first
    (with what it read), with the change too when there was one."""
    sources = [s for s in run.changes.get("sources") or [] if isinstance(s, dict) and s.get("url")]
    chat_id = uuid.UUID(str(run.action.get("thread_id")))
    link = message.chat_link(settings.public_url, chat_id)
    question = str(run.action.get("message", ""))
    said = [message.summary(sources), message.body(sources, link, chat_id)] if sources else []
    if run.became_met:
        met = met_words(run.action.get("condition"), run.value)
        text = "\n\n".join([f"{met} Question: {question}", *said] if said else [met, question])
        return atom.Entry(run.id, f"Lookout: {met}"[:250], run.finished_at, text, link)
    if not sources:
        return atom.Entry(run.id, "Lookout: something changed", run.finished_at, question, link)
    return atom.Entry(run.id, message.title(sources), run.finished_at, "\n\n".join(said), link)


def met_words(condition: Any, value: Any) -> str:
    """ "Condition met: the price is below 5 € (read 4.80 €)." """
    wanted = conditions.describe(condition) if isinstance(condition, dict) else "it happened"
    unit = condition.get("unit") if isinstance(condition, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        read = f" (read {conditions.money(value, unit)})"
    elif isinstance(value, list) and value:
        read = f" (new: {'; '.join(str(item) for item in value[:5])})"
    else:
        read = ""
    return f"Condition met: {wanted}{read}."


def _gone() -> errors.NotFound:
    return errors.NotFound("No such feed: its link was revoked or replaced by a new one.")
