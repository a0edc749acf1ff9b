"""trafilatura's pruning XPaths, rewritten to select the same elements at less CPU.

trafilatura prunes a page with XPaths such as `.//*[self::div or self::p ...][re:test(@id, ...)
or re:test(@class, ...) or contains(@style, ...)]`. Two things make them slow in libxml2:

- every element is tested, and lxml runs each `re:test` (EXSLT) as a call into Python, attribute
  or not: on bench/corpus.py's pages, one expression (`.//*[@class='comments-title' or ...]`,
  three `re:test`s on every element) was 1.7 ms of a page's ~14 ms;
- `self::div or self::p or ...` evaluates a location path per name on every element: the same
  selection written `.//div | .//p | ...` took 0.11 ms where the predicate took 0.76 (80 pages).

So each expression of trafilatura.xpaths' lists is rewritten, where that provably selects the
same elements, and put back in its list (trafilatura's modules hold the lists, not the items):

- an attribute guard: before a predicate that only tests attributes (`@x`, `@x='v'`, `contains`,
  `starts-with`, `translate`, `re:test` of attributes, joined by `or` / `and`), `[@x or @y ...]`
  of the attributes it reads. Every such test is false on an element that has none of them (an
  absent attribute reads as "", and no literal in the predicate is empty and no pattern matches
  ""), so the guard drops only elements the predicate drops, and later positional predicates
  count the same elements;
- each `re:test(@x, ...)` as `((@x) and re:test(@x, ...))` where its pattern cannot match "":
  real pages give most elements a class, few an id or a style, and trafilatura tests all three;
- a union: `.//*[self::a or self::b]` as `(.//a | .//b)` where no predicate is positional (a
  filter on a union keeps document order, as the location path's result is in).

An expression that does not fit is left as it is. tests/unit/test_prunes.py checks every
rewritten expression against trafilatura's own on real pages (tests/corpus), that pages read the
same with and without the rewrite, and that the costly expressions are rewritten.

Measured 2026-12-06 (thread CPU; this machine is noisy, so before and after in the same hour):
- bench/corpus.py (200 pages, bench/scrape.py's), best of 3: 13.7 -> 10.4 ms a page for the
  whole extraction (the XPaths 3.5 -> ~1 ms);
- tests/corpus/articles (181 real pages): the XPaths 3.8 -> 2.4 ms a page; bench/extract.py
  0.81x -> 0.72x trafilatura's CPU, F1 0.958 both;
- every page of tests/corpus (376 pages, main content and whole page) reads byte for byte the
  same, and bench/kinds.py scores every page the same.
trafilatura itself, in bench/extract.py and bench/kinds.py, runs with its own (`as_shipped`).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

# `.//*`, optionally a `(` before it, then a predicate of `self::name` tests joined by `or`.
_ELEMENTS = re.compile(r"(\s*\(?)\.//\*(?:\[\s*(self::[\w-]+(?:\s+or\s+self::[\w-]+)*)\s*\])?")
_ATTRIBUTE = re.compile(r"@([\w:-]+)")
_FUNCTION = re.compile(r"([\w:-]+)\s*\(")
_LITERAL = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_RE_TEST = re.compile(r"re:test\([^,]+,\s*(?:'([^']*)'|\"([^\"]*)\")\s*(?:,\s*'([^']*)')?\s*\)")
_ATTRIBUTES = re.compile(r"@[\w:-]+(?:\s*\|\s*@[\w:-]+)*")
_ONLY_OPERATORS = re.compile(r"[\s()|,=!]*")
# A predicate that counts positions, or may be a number (which XPath reads as a position).
_POSITIONAL = re.compile(
    r"\[\s*\d|\b(?:position|last|count|string-length|sum|number|floor|ceiling|round)\s*\("
    r"|\b(?:div|mod)\b|[+*]"
)
# Functions that read "" for an absent attribute and so are false with a non-empty literal.
_FALSE_WHEN_ABSENT = frozenset(["contains", "starts-with", "translate", "re:test"])
_REGEXP_NS = "http://exslt.org/regular-expressions"
# (list name, index, trafilatura's path, ours) of what install() rewrote.
REWRITTEN: list[tuple[str, int, str, str]] = []
_SWAPPED: list[tuple[list[Any], int, Any, Any]] = []  # (list, index, theirs, ours)
_INSTALLING = threading.Lock()


def install() -> None:
    """Rewrite trafilatura.xpaths' lists in place, once a process (~2 ms)."""
    with _INSTALLING:
        if not _SWAPPED:
            _install()


def _install() -> None:
    from lxml import etree
    from trafilatura import xpaths

    for name, value in vars(xpaths).items():
        if not isinstance(value, list):
            continue
        for index, expression in enumerate(value):
            if not isinstance(expression, etree.XPath):
                continue
            faster = rewrite(expression.path)
            if faster is None:
                continue
            try:
                ours = etree.XPath(faster, namespaces={"re": _REGEXP_NS})
            except etree.XPathSyntaxError:  # a form rewrite() misread: theirs stays
                continue
            value[index] = ours
            REWRITTEN.append((name, index, expression.path, faster))
            _SWAPPED.append((value, index, expression, ours))


@contextlib.contextmanager
def as_shipped() -> Iterator[None]:
    """trafilatura's own expressions within the block: bench/extract.py and bench/kinds.py time
    trafilatura as a user runs it, in the process that runs ours."""
    for value, index, theirs, _ in _SWAPPED:
        value[index] = theirs
    try:
        yield
    finally:
        for value, index, _, ours in _SWAPPED:
            value[index] = ours


def rewrite(path: str) -> str | None:
    """`path` selecting the same elements faster, or None if it is not of a form known to be
    safe to rewrite (see the module docstring)."""
    found = _ELEMENTS.match(path)
    if found is None or _top_level_union(path):
        return None
    opening, names = found.group(1), found.group(2)
    rest = path[found.end() :]
    predicate = _first_predicate(rest)
    guard = _guard(predicate) if predicate is not None else None
    union = names is not None and not _POSITIONAL.search(rest)
    tested = _test_only_present(rest)
    if guard is None and not union and tested == rest:
        return None
    rest = tested
    if union:
        tags = [name.strip()[len("self::") :] for name in names.split(" or ") if name.strip()]
        selection = "(" + " | ".join(f".//{tag}" for tag in tags) + ")"
    else:
        selection = ".//*" + (f"[{names}]" if names else "")
    return opening + selection + (f"[{guard}]" if guard else "") + rest


def _guard(predicate: str) -> str | None:
    """`@x or @y ...` for a predicate that is false on an element without those attributes,
    None if the predicate may be true there."""
    inner = predicate[1:-1]
    if any(not (single or double) for single, double in _LITERAL.findall(inner)):
        return None  # contains(@x, '') and @x = '' hold for ""
    stripped = _LITERAL.sub("'-'", inner)  # a pattern's brackets and parentheses are not XPath
    if not set(_FUNCTION.findall(stripped)) <= _FALSE_WHEN_ABSENT:
        return None  # not(), string-length()...: may hold for ""
    for single, double, flags in _RE_TEST.findall(inner):
        if re.search(single or double, "", re.IGNORECASE if "i" in flags else 0):
            return None
    if inner.count("re:test(") != len(_RE_TEST.findall(inner)):
        return None  # a re:test of another shape: not checked
    rest = _FUNCTION.sub("", _ATTRIBUTE.sub("", stripped.replace("'-'", "")))
    if not _ONLY_OPERATORS.fullmatch(re.sub(r"\b(?:or|and)\b", "", rest)):
        return None  # reads more than the element's attributes (`.`, a path, a number...)
    names = sorted(set(_ATTRIBUTE.findall(stripped)))
    return " or ".join(f"@{name}" for name in names) if names else None


def _test_only_present(path: str) -> str:
    """`path` with each `re:test(@x, 'pattern')` as `(@x and re:test(@x, 'pattern'))` (and
    `(@x or @y)` for `@x|@y`): the same where the pattern cannot match "", and libxml2 skips
    the call into Python where the attribute is absent (an element has a class, rarely an id
    and a style, and trafilatura tests all three)."""
    parts, start = [], 0
    for call in _calls(path, "re:test("):
        found = _RE_TEST.fullmatch(path[call.start : call.stop])
        attributes = path[call.start + len("re:test(") : call.stop].split(",")[0].strip()
        if found is None or not _ATTRIBUTES.fullmatch(attributes):
            continue
        pattern, flags = found.group(1) or found.group(2), found.group(3) or ""
        if re.search(pattern, "", re.IGNORECASE if "i" in flags else 0):
            continue
        present = " or ".join(name.strip() for name in attributes.split("|"))
        parts += [path[start : call.start], f"(({present}) and {path[call.start : call.stop]})"]
        start = call.stop
    return "".join(parts) + path[start:]


def _calls(path: str, opening: str) -> list[slice]:
    """Where each call `opening...)` is in `path`, outside quoted strings."""
    found, index, quote = [], 0, ""
    while index < len(path):
        char = path[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif path.startswith(opening, index):
            end = _closing(path, index + len(opening))
            if end is None:
                return []
            found.append(slice(index, end + 1))
            index = end
        index += 1
    return found


def _closing(path: str, index: int) -> int | None:
    """The index of the `)` closing a call whose arguments start at `index`."""
    depth, quote = 1, ""
    for position in range(index, len(path)):
        char = path[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position
    return None


def _first_predicate(rest: str) -> str | None:
    """The bracketed predicate `rest` starts with (quoted strings may hold brackets)."""
    stripped = rest.lstrip()
    if not stripped.startswith("["):
        return None
    depth, quote = 0, ""
    for index, char in enumerate(stripped):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return stripped[: index + 1]
    return None


def _top_level_union(path: str) -> bool:
    """Whether `path` joins paths with `|` outside any predicate or parenthesis."""
    depth, quote = 0, ""
    for char in path:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False
