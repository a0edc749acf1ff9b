"""The one layering (CONTRIBUTING.md) holds: `make lint` checks it too, and CI runs this file.

import-linter's contracts (.importlinter) see every import, function-level and TYPE_CHECKING ones
included; the AST check below keeps the rule that hides cycles from readers: no function-level
import of a lookout module outside cli.py.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "lookout"
LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename='.importlinter', no_cache=True, no_logo=True))"
)


def test_no_module_imports_a_higher_layer() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _function_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                module = inner.module or ""
                if inner.level or module == "lookout" or module.startswith("lookout."):
                    found.append((inner.lineno, module))
            elif isinstance(inner, ast.Import):
                found.extend(
                    (inner.lineno, alias.name)
                    for alias in inner.names
                    if alias.name == "lookout" or alias.name.startswith("lookout.")
                )
    return found


def test_no_function_level_import_of_lookout_outside_the_cli() -> None:
    hidden = {
        f"{path.relative_to(PACKAGE)}:{line} {module}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "cli.py" or path.parent != PACKAGE
        for line, module in _function_level_imports(ast.parse(path.read_text()))
    }
    assert not hidden, sorted(hidden)
