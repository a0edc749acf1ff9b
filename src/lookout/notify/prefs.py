"""A watch's notification settings, kept in `automations.notify` next to its credit estimate."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from lookout.agent import router

MAX_COMPARED = 10  # watch_versions keeps this many versions of a page
MAX_TARGETS = 10


@dataclasses.dataclass(frozen=True)
class WatchNotify:
    """`targets` None means "the workspace's default target, if any" (looked up at send time).

    `compared_versions` N: a change is reported only when the new version of a page differs from
    each of its last N versions (N = 1: from the previous one, i.e. every change).
    """

    enabled: bool = False
    targets: tuple[uuid.UUID, ...] | None = None
    compared_versions: int = 1

    @classmethod
    def of(cls, notify: dict[str, Any]) -> WatchNotify:
        """Read the stored JSON; anything missing or malformed falls back to the default."""
        raw_targets = notify.get("targets")
        targets = None
        if isinstance(raw_targets, list):
            targets = tuple(uuid.UUID(str(t)) for t in raw_targets[:MAX_TARGETS])
        compared = notify.get("compared_versions")
        return cls(
            enabled=bool(notify.get("enabled", False)),
            targets=targets,
            compared_versions=compared if isinstance(compared, int) else 1,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "targets": None if self.targets is None else [str(t) for t in self.targets],
            "compared_versions": self.compared_versions,
        }

    def merged(self, changes: dict[str, Any]) -> WatchNotify:
        """These settings with the keys present in `changes` (a validated PATCH body) replaced."""
        targets = changes.get("targets", self.targets)
        return dataclasses.replace(
            self,
            enabled=changes.get("enabled", self.enabled),
            targets=None if targets is None else tuple(targets),
            compared_versions=changes.get("compared_versions", self.compared_versions),
        )


def stored(base: dict[str, Any], wanted: WatchNotify) -> dict[str, Any]:
    """`automations.notify` with the notification settings replaced (other keys kept)."""
    return {**base, **wanted.to_json()}


SET_UP = (
    " Notifications are on for this watch, but this workspace has no notification target yet, so"
    " none will be sent: add one in Settings → Notifications and make it the default (or choose"
    " it for this watch)."
)


def sentence(wanted: WatchNotify, reach: tuple[str, ...] | None = None) -> str:
    """What the watch's confirmation adds about notifications ("" when they are off).

    `reach` names the targets a change would be sent to now (None: not looked up). A
    notification is promised only when one will be sent; else it says how to set one up."""
    if not wanted.enabled:
        return ""
    if reach is not None and not reach:
        return SET_UP
    if reach is None:
        where = (
            "this workspace's default notification target, if it has one"
            if wanted.targets is None
            else "the targets chosen for this watch"
        )
        return f" When something changes I'll also notify {where}."
    names = _names(reach)
    if wanted.targets is None:
        return (
            f" When something changes I'll also send a notification to {names}, this "
            "workspace's default notification target."
        )
    return f" When something changes I'll also send a notification to {names}."


def _names(reach: tuple[str, ...]) -> str:
    quoted = [f"“{name}”" for name in reach]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def requested(message: str, previous: dict[str, Any] | None) -> WatchNotify:
    """A new watch's settings: its chat's previous watch's, turned on by "notify me when …"."""
    kept = WatchNotify.of(previous or {})
    return dataclasses.replace(kept, enabled=True) if router.route(message).notify else kept
