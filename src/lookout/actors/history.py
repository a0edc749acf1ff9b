"""The retention job of watch histories: checks older than their workspace's retention go, and
the page contents no check points at any more."""

from __future__ import annotations

import logging

import dramatiq

from lookout import periodic
from lookout.actors import runtime, ticked
from lookout.watches import history

logger = logging.getLogger(__name__)


@dramatiq.actor(max_retries=0, time_limit=120_000, **ticked.options(periodic.PRUNE_HISTORY))
async def prune_history() -> None:
    """Every hour: prune checks past retention (the history says so) and orphaned contents."""
    state = runtime.current()
    checks, contents = await history.prune(state.db)
    if checks or contents:
        logger.info("pruned %d check(s) and %d page content(s) past retention", checks, contents)
