"""Client JSON holds text Postgres can store: no NUL characters, no unpaired surrogates.

JSON may spell both (`\\u0000`, `\\ud800`) and Python decodes them, but Postgres refuses NUL in
text and jsonb and a lone surrogate cannot be encoded as UTF-8: stored, either was a 500 (found
by tests/reliability/test_hostile_routes.py). Checked once, where a body is decoded.
"""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # json.loads joins valid pairs: any left is lone


def unstorable(value: Any) -> str | None:
    """The path (`messages.0.text`) of a string or key that Postgres cannot store, or None."""
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            if _UNSTORABLE.search(item):
                return path or "_schema"
        elif isinstance(item, dict):
            for key, child in item.items():
                if _UNSTORABLE.search(key):
                    return path or "_schema"
                pending.append((f"{path}.{key}" if path else key, child))
        elif isinstance(item, list):
            prefix = f"{path}." if path else ""
            pending.extend((f"{prefix}{i}", child) for i, child in enumerate(item))
    return None


MESSAGE = "Text may not contain NUL characters or unpaired surrogates (\\u0000, \\ud800-\\udfff)."
