"""Capabilities ("verbs"). Importing this package registers every verb in `registry`."""

from __future__ import annotations

from lookout.capabilities import maps, web

__all__ = ["maps", "web"]
