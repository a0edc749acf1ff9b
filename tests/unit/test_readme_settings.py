"""The README's settings table holds every setting of settings.py, each with its real default.

Adding a setting means adding its row: `python -m tests.unit.test_readme_settings --write` adds
the missing rows (meaning "TODO", which this test refuses until it is written), drops the rows of
settings that are gone and corrects the defaults, keeping every meaning already written.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

from lookout.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"
BEGIN, END = "<!-- settings:begin -->", "<!-- settings:end -->"
HEADER = "| variable | default | meaning |\n|---|---|---|"
TODO = "TODO: say what it does"
_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|(.*?)\|(.*)\|\s*$")


def shown_default(field: dataclasses.Field[Any]) -> str:
    """A default as the table shows it: `required`, `(none)`, 0/1, a number, or `text`."""
    value = field.default
    if value is dataclasses.MISSING:
        return "required"
    if value in ("", ()):
        return "(none)"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    text = ",".join(value) if isinstance(value, tuple) else str(value)
    return f"`{text}`"


def expected() -> dict[str, str]:
    """Every variable settings.py reads, with its shown default, in the dataclass's order."""
    return {f.metadata["env"]: shown_default(f) for f in dataclasses.fields(Settings)}


def table_rows(text: str) -> dict[str, tuple[str, str]]:
    """variable → (default, meaning), from the README's table between the markers."""
    assert BEGIN in text and END in text, f"README.md lost its {BEGIN} … {END} markers"
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in body.splitlines():
        found = _ROW.match(line.strip())
        if found:
            name, default, meaning = (part.strip() for part in found.groups())
            assert name not in rows, f"{name} has two rows"
            rows[name] = (default, meaning)
    return rows


def render(rows: dict[str, tuple[str, str]]) -> str:
    """The table settings.py asks for, with the meanings already written in `rows`."""
    lines = [HEADER]
    for name, default in expected().items():
        meaning = rows.get(name, ("", TODO))[1]
        lines.append(f"| `{name}` | {default} | {meaning} |")
    return "\n".join(lines)


def test_every_setting_has_one_row_with_its_default() -> None:
    rows = table_rows(README.read_text())
    want = expected()
    missing = [name for name in want if name not in rows]
    unknown = [name for name in rows if name not in want]
    wrong = {n: (rows[n][0], d) for n, d in want.items() if n in rows and rows[n][0] != d}
    fix = "run `python -m tests.unit.test_readme_settings --write`, then write the meanings"
    assert not missing, f"settings missing from README.md: {missing}; {fix}"
    assert not unknown, f"README.md lists settings settings.py does not read: {unknown}; {fix}"
    assert not wrong, f"README.md defaults (shown, real) that differ: {wrong}; {fix}"


def test_every_row_says_what_the_setting_does() -> None:
    rows = table_rows(README.read_text())
    unsaid = [name for name, (_, meaning) in rows.items() if not meaning or TODO in meaning]
    assert not unsaid, f"say in README.md what these settings do: {unsaid}"


def test_the_table_follows_settings_order() -> None:
    assert list(table_rows(README.read_text())) == list(expected())


def main(argv: list[str]) -> int:
    text = README.read_text()
    table = render(table_rows(text))
    if "--write" not in argv:
        print(table)
        return 0
    head, rest = text.split(BEGIN, 1)
    README.write_text(f"{head}{BEGIN}\n{table}\n{END}{rest.split(END, 1)[1]}")
    print(f"README.md: {len(expected())} settings", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
