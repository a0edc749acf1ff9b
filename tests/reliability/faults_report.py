"""Fault tests' figures: printed, and written as JSON for docs/RELIABILITY.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent / "output"


def write(name: str, figures: dict[str, Any]) -> Path:
    """tests/reliability/output/faults-<name>.json (gitignored); returns its path."""
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"faults-{name}.json"
    path.write_text(json.dumps({"name": name, **figures}, indent=2, default=str) + "\n")
    print(f"\n[faults] {name}: " + json.dumps(figures, default=str))
    return path
