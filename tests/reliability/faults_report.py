"""Fault tests' figures: printed, and written as JSON for docs/RELIABILITY.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent / "output"


def write(name: str, figures: dict[str, Any], *, title: str, what: str) -> Path:
    """tests/reliability/output/faults-<name>.json (gitignored; report.py renders it into
    docs/RELIABILITY.md: `title`, `what`, `tried`, `held`, then every other figure)."""
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"faults-{name}.json"
    document = {"name": name, "title": title, "what": what, **figures}
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"\n[faults] {name}: " + json.dumps(figures, default=str))
    return path
