"""trafilatura's pruning XPaths, rewritten to select the same elements at less CPU.

trafilatura prunes a page with XPaths such as `.//*[self::div or self::p ...][re:test(@id, ...)
or re:test(@class, ...) or contains(@style, ...)]`. Two things make them slow in libxml2:

- every element is tested, and lxml runs each `re:test` (EXSLT) as a call into Python, attribute
  or not: on bench/corpus.py's pages, one expression (`.//*[@class='comments-title' or ...]`,
  three `re:test`s on every element) was 1.7 ms of a page's ~14 ms;
- `self::div or self::p or ...` evaluates a location path per name on every element: the same
  selection written `.//div | .//p | ...` took 0.11 ms where the predicate took 0.76 (80 pages).

So each expression of trafilatura.xpaths' lists is rewritten where it has one of three forms
whose rewrite selects the same elements, and put back in its list (trafilatura's modules hold
the lists, not the items). Each form is read with a small grammar; anything else in it (another
function, a number, a path, a namespace prefix other than `re:`) and the expression is left as
trafilatura ships it:

- an attribute guard: a first predicate made only of `@x`, `@x='v'`, `'v'=@x`, and
  `contains` / `starts-with` / `re:test` of `@x`, `@x|@y` or `translate(@x, ...)` against a
  literal, joined by `or` / `and`, gets `[@x or @y ...]` of the attributes it reads before it.
  Each such test is false on an element with none of them (an absent attribute reads as "", no
  literal compared is empty and no pattern matches ""), so the guard drops only elements the
  predicate drops, and later positional predicates count the same elements;
- each `re:test(@x, 'p')` (or of `@x|@y`) as `((@x) and re:test(@x, 'p'))` where `p` cannot
  match "": real pages give most elements a class, few an id or a style, and trafilatura tests
  all three;
- a union: `.//*[self::a or self::b][P]...` as `(.//a | .//b)[P]...` where each later predicate
  is a boolean (an `or` / `and` / comparison at its top, a boolean function, an attribute): a
  number there would count positions among siblings in one and in the whole union in the other.
  A filter on a union keeps document order, as the location path's result is in.

A union of paths (`a | b`, outside predicates) is rewritten member by member: each selects the
same elements, so their union does. Besides the lists, an expression a trafilatura module holds
by name is rewritten in every module holding it: baseline's BASIC_CLEAN_XPATH (a union whose last
member runs two `re:test`s on every element), which html2txt runs on the page for trafilatura's
recall retry test (half the real articles, those under 3,000 characters) and jusText on its
input. jusText's stoplist is made a frozenset (stoplist_as_set) the first time the default mode
is used.

Each rewritten expression is compiled and tried on a small page before it replaces trafilatura's.
tests/unit/test_prunes.py checks every rewritten expression against trafilatura's own on real
pages (tests/corpus), that pages read the same with and without the rewrite (and that the
extraction installs it), and that the costly expressions are rewritten.

Measured 2026-12-06 (thread CPU; this machine is noisy, so before and after in the same hour):
- bench/corpus.py (200 pages, bench/scrape.py's), best of 3: 13.7 -> 10.4 ms a page for the
  whole extraction (the XPaths 3.5 -> ~1 ms);
- tests/corpus/articles (181 real pages): the XPaths 3.8 -> 2.4 ms a page; bench/extract.py
  0.79x -> 0.71x trafilatura's CPU, F1 0.958 both (2606bce against ca2847a, one run each);
- every page of tests/corpus (376 pages, main content and whole page) reads byte for byte the
  same, and bench/kinds.py scores every page the same.
- 2026-12-06, the union rewrite (BASIC_CLEAN_XPATH) and the stoplist: the expression alone
  4.3 -> 3.0 ms on a whole real article page; bench/extract.py, before and after alternated
  twice in one hour: 0.72x / 0.72x -> 0.70x / 0.70x trafilatura's CPU (13.4-14.1 -> 13.2-13.3
  ms a page), F1 0.958 all four; the 371 pages of tests/corpus read byte for byte the same
  (markdown, text, hash, links, metadata; main content and whole page).
trafilatura itself, in bench/extract.py and bench/kinds.py, runs with its own (`as_shipped`).
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree

# `.//*`, optionally a `(` before it, then a predicate of `self::name` tests joined by `or`.
_ELEMENTS = re.compile(r"(\s*\(?)\.//\*(?:\[\s*(self::[\w-]+(?:\s+or\s+self::[\w-]+)*)\s*\])?")
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<literal>'[^']*'|"[^"]*")
    | (?P<number>\d+(?:\.\d*)?|\.\d+)
    | (?P<attribute>@[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)
    | (?P<name>[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)
    | (?P<operator>!=|<=|>=|//|::|\.\.|[()\[\],|=<>+*/.@$-])
    )""",
    re.VERBOSE,
)
_COMPARISONS = frozenset(["=", "!=", "<", ">", "<=", ">="])
_BOOLEAN_FUNCTIONS = frozenset(["contains", "starts-with", "re:test", "not", "boolean", "true"])
_REGEXP_NS = "http://exslt.org/regular-expressions"
_TRIAL = "<html><body><div id='a' class='b' style='c'><p>d</p><ul><li>e</li></ul></div></body>"
# (list name, index, trafilatura's path, ours) of what install() rewrote; (name, None, ...) for
# an expression modules hold by name.
REWRITTEN: list[tuple[str, int | None, str, str]] = []
# (list or module, index or name, trafilatura's expression, ours); the stoplist's too.
_SWAPPED: list[tuple[list[etree.XPath] | ModuleType, int | str, object, object]] = []
_INSTALLING = threading.Lock()
_installed = False

Token = tuple[str, str]  # (kind, text): kind is a group name of _TOKEN


class _Unsafe(Exception):
    """The text is not of a form known to be safe to rewrite."""


def install() -> None:
    """Rewrite trafilatura.xpaths' lists in place, once a process (~2 ms)."""
    global _installed
    with _INSTALLING:
        if not _installed:
            _install()
            _installed = True


def _install() -> None:
    from lxml import etree, html
    from trafilatura import xpaths

    trial = html.fromstring(_TRIAL)

    def faster(expression: object) -> etree.XPath | None:
        if not isinstance(expression, etree.XPath) or (path := rewrite(expression.path)) is None:
            return None
        try:
            ours = etree.XPath(path, namespaces={"re": _REGEXP_NS})
            ours(trial)
        except etree.XPathError:  # a form rewrite() misread: theirs stays
            return None
        return ours

    for name, value in vars(xpaths).items():
        if not isinstance(value, list):
            continue
        for index, expression in enumerate(value):
            if (ours := faster(expression)) is not None:
                value[index] = ours
                REWRITTEN.append((name, index, expression.path, ours.path))
                _SWAPPED.append((value, index, expression, ours))
    # An expression a module holds by name (baseline's BASIC_CLEAN_XPATH, which html2txt runs
    # on the whole page to decide on trafilatura's recall retry, and jusText's input): every
    # module holding it gets ours.
    held: dict[tuple[str, int], tuple[etree.XPath, list[ModuleType]]] = {}
    for module in _trafilatura_modules():
        for name, value in vars(module).items():
            if isinstance(value, etree.XPath):
                held.setdefault((name, id(value)), (value, []))[1].append(module)
    for (name, _), (expression, modules) in held.items():
        if (ours := faster(expression)) is not None:
            REWRITTEN.append((name, None, expression.path, ours.path))
            for module in modules:
                _SWAPPED.append((module, name, expression, ours))
                setattr(module, name, ours)


def stoplist_as_set() -> None:
    """jusText's stoplist for trafilatura's default mode, made once a process as a frozenset.
    trafilatura makes it a tuple of the 154,484 words of jusText's 100 languages, and jusText
    keys its cache of their lowercased set (justext.core.define_stoplist, an lru_cache) by it: a
    tuple's hash is computed at every call, 3.0-6.6 ms of each page read in default mode (once or
    twice a page); a frozenset's once. jusText lowercases either into the same set, so pages
    read the same (tests/unit/test_extract_kinds.py). The set costs 6.6 MiB beside the tuple's
    13.9 and jusText's lowercased set's 16.6, in a reader that has read a page in default mode."""
    from trafilatura import external

    with _INSTALLING:
        if not isinstance(external.JT_STOPLIST, frozenset):
            theirs = external.JT_STOPLIST or external.jt_stoplist_init()
            ours = frozenset(theirs)
            _SWAPPED.append((external, "JT_STOPLIST", theirs, ours))
            _put(external, "JT_STOPLIST", ours)


def _trafilatura_modules() -> list[ModuleType]:
    return [
        module
        for name, module in list(sys.modules.items())
        if (name == "trafilatura" or name.startswith("trafilatura.")) and module is not None
    ]


def _put(container: list[etree.XPath] | ModuleType, key: int | str, value: object) -> None:
    if isinstance(container, list):
        container[key] = value  # type: ignore[index]
    else:
        setattr(container, str(key), value)


@contextlib.contextmanager
def as_shipped() -> Iterator[None]:
    """trafilatura's own expressions and stoplist within the block, for every thread of the
    process: for bench/extract.py and bench/kinds.py, which time trafilatura as a user runs it
    in the process that runs ours. Not for a process that reads pages meanwhile."""
    for container, key, theirs, _ in _SWAPPED:
        _put(container, key, theirs)
    try:
        yield
    finally:
        for container, key, _, ours in _SWAPPED:
            _put(container, key, ours)


def rewrite(path: str) -> str | None:
    """`path` selecting the same elements faster, or None if it is not of a form known to be
    safe to rewrite (see the module docstring)."""
    members = _union_members(path)
    if len(members) > 1:  # each member selects the same elements: so does their union
        rewritten = [rewrite(member) for member in members]
        if all(new is None for new in rewritten):
            return None
        pairs = zip(members, rewritten, strict=True)
        return "|".join(old if new is None else new for old, new in pairs)
    tokens = _tokens(path)
    found = _ELEMENTS.match(path)
    if tokens is None or found is None or _foreign_prefix(tokens):
        return None
    opening, names = found.group(1), found.group(2)
    rest = path[found.end() :]
    predicate = _first_predicate(rest)
    guard = _guard(predicate) if predicate is not None else None
    if guard is not None and predicate is not None and predicate[1:-1].strip() == guard:
        guard = None  # `[@x]` needs no `[@x]` before it
    union = names is not None and _only_booleans(rest)
    tested = _test_only_present(rest)
    if guard is None and not union and tested == rest:
        return None
    if union and names is not None:
        tags = [name.strip()[len("self::") :] for name in names.split(" or ") if name.strip()]
        selection = "(" + " | ".join(f".//{tag}" for tag in tags) + ")"
    else:
        selection = ".//*" + (f"[{names}]" if names else "")
    return opening + selection + (f"[{guard}]" if guard else "") + tested


def _tokens(text: str) -> list[Token] | None:
    """`text` as XPath tokens, None if some part of it is not one."""
    tokens, at, text = [], 0, text.rstrip()
    while at < len(text):
        found = _TOKEN.match(text, at)
        if found is None or found.lastgroup is None:
            return None
        tokens.append((found.lastgroup, found.group(found.lastgroup)))
        at = found.end()
    return tokens


def _foreign_prefix(tokens: list[Token]) -> bool:
    """Whether a name has a namespace prefix other than `re:` (ours knows only that one)."""
    return any(
        kind in ("name", "attribute") and ":" in text and not text.startswith("re:")
        for kind, text in tokens
    )


def _guard(predicate: str) -> str | None:
    """`@x or @y ...` for a predicate that is false on an element without those attributes,
    None if it is not of the form known to be (see the module docstring)."""
    tokens = _tokens(predicate[1:-1])
    if not tokens:
        return None
    try:
        names = _Attributes(tokens).predicate()
    except _Unsafe:
        return None
    return " or ".join(sorted(names))


class _Attributes:
    """Reads a predicate of the guard's grammar; each method returns the attributes it read
    and raises _Unsafe at anything else."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens, self.at = tokens, 0

    def predicate(self) -> set[str]:
        names = self.test()
        while self.peek() in (("name", "or"), ("name", "and")):
            self.at += 1
            names |= self.test()
        if self.at != len(self.tokens):
            raise _Unsafe
        return names

    def test(self) -> set[str]:
        kind, text = self.peek()
        if kind == "attribute":
            self.at += 1
            if self.peek() == ("operator", "="):
                self.at += 1
                self.literal()
            return {text}
        if kind == "literal":
            self.literal()
            self.take("operator", "=")
            return {self.take("attribute")}
        if kind != "name" or text not in ("contains", "starts-with", "re:test"):
            raise _Unsafe
        self.at += 1
        self.take("operator", "(")
        names = self.subject()
        self.take("operator", ",")
        pattern, flags = self.literal(), ""
        if text == "re:test" and self.peek() == ("operator", ","):
            self.at += 1
            flags = self.literal(empty=True)
        self.take("operator", ")")
        if text == "re:test" and not _never_empty(pattern, flags):
            raise _Unsafe
        return names

    def subject(self) -> set[str]:
        """`@x`, `@x|@y...` or `translate(@x, 'a', 'b')`: "" for an element without them."""
        if self.peek() == ("name", "translate"):
            self.at += 1
            self.take("operator", "(")
            name = self.take("attribute")
            for _ in range(2):
                self.take("operator", ",")
                self.literal(empty=True)
            self.take("operator", ")")
            return {name}
        names = {self.take("attribute")}
        while self.peek() == ("operator", "|"):
            self.at += 1
            names.add(self.take("attribute"))
        return names

    def literal(self, *, empty: bool = False) -> str:
        text = self.take("literal")[1:-1]
        if not text and not empty:
            raise _Unsafe  # contains(@x, '') and @x = '' hold for ""
        return text

    def take(self, kind: str, text: str | None = None) -> str:
        found = self.peek()
        if found[0] != kind or (text is not None and found[1] != text):
            raise _Unsafe
        self.at += 1
        return found[1]

    def peek(self) -> Token:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "")


def _never_empty(pattern: str, flags: str) -> bool:
    """Whether no match of `pattern` (lxml runs it with Python's re) is the empty string's."""
    try:
        return re.search(pattern, "", re.IGNORECASE if "i" in flags else 0) is None
    except re.error:
        return False


def _only_booleans(rest: str) -> bool:
    """Whether `rest` is predicates only, each a boolean (a number would be a position)."""
    while rest.strip():
        predicate = _first_predicate(rest)
        if predicate is None:
            return False  # another step follows, or something else
        tokens = _tokens(predicate[1:-1])
        if not tokens or not _boolean(tokens):
            return False
        rest = rest.lstrip()[len(predicate) :]
    return True


def _boolean(tokens: list[Token]) -> bool:
    """Whether the expression is a boolean by its form: an `or` / `and` or a comparison at its
    top level, one call of a boolean function, or one attribute."""
    depth = 0
    for index, (kind, text) in enumerate(tokens):
        if kind == "operator" and text in "([":
            depth += 1
        elif kind == "operator" and text in ")]":
            depth -= 1
        elif depth == 0 and kind == "operator" and text in _COMPARISONS:
            return True
        elif depth == 0 and kind == "name" and text in ("or", "and") and index > 0:
            before = tokens[index - 1]
            if before[0] != "operator" or before[1] in (")", "]", "."):
                return True  # an operator, not an element named `or` (`.//or`)
    if len(tokens) == 1:
        return tokens[0][0] == "attribute"
    first, second, last = tokens[0], tokens[1], tokens[-1]
    return (
        first[0] == "name"
        and first[1] in _BOOLEAN_FUNCTIONS
        and second == ("operator", "(")
        and last == ("operator", ")")
        and _closing_index(tokens, 1) == len(tokens) - 1
    )


def _closing_index(tokens: list[Token], opening: int) -> int | None:
    depth = 0
    for index in range(opening, len(tokens)):
        if tokens[index] == ("operator", "("):
            depth += 1
        elif tokens[index] == ("operator", ")"):
            depth -= 1
            if depth == 0:
                return index
    return None


def _test_only_present(path: str) -> str:
    """`path` with each `re:test(@x, 'pattern')` as `((@x) and re:test(@x, 'pattern'))` (and
    `(@x or @y)` for `@x|@y`): the same where the pattern cannot match "", and libxml2 skips
    the call into Python where the attribute is absent (an element has a class, rarely an id
    and a style, and trafilatura tests all three)."""
    parts, start = [], 0
    for call in _calls(path, "re:test("):
        tokens = _tokens(path[call])
        names = _tested_attributes(tokens) if tokens else None
        if names is None:
            continue
        present = " or ".join(names)
        parts += [path[start : call.start], f"(({present}) and {path[call]})"]
        start = call.stop
    return "".join(parts) + path[start:]


def _tested_attributes(tokens: list[Token]) -> list[str] | None:
    """The attributes of `re:test(@x|@y, 'pattern'[, 'flags'])`, None for another form or a
    pattern that may match ""."""
    reader = _Attributes(tokens)
    try:
        reader.take("name", "re:test")
        reader.take("operator", "(")
        names: list[str] = [reader.take("attribute")]
        while reader.peek() == ("operator", "|"):
            reader.at += 1
            names.append(reader.take("attribute"))
        reader.take("operator", ",")
        pattern, flags = reader.literal(), ""
        if reader.peek() == ("operator", ","):
            reader.at += 1
            flags = reader.literal(empty=True)
        reader.take("operator", ")")
    except _Unsafe:
        return None
    return names if reader.at == len(tokens) and _never_empty(pattern, flags) else None


def _calls(path: str, opening: str) -> list[slice]:
    """Where each call `opening...)` is in `path`, outside quoted strings and not the end of a
    longer name (`pre:test(`)."""
    found, index, quote = [], 0, ""
    while index < len(path):
        char = path[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif path.startswith(opening, index) and not re.match(r"[\w:.-]", path[index - 1 : index]):
            end = _matching(path, index + len(opening) - 1)
            if end is None:
                return []
            found.append(slice(index, end + 1))
            index = end
        index += 1
    return found


def _matching(text: str, start: int) -> int | None:
    """The index of the bracket closing the `(` or `[` at `text[start]` (quoted strings may
    hold brackets), None if it is never closed."""
    opening = text[start]
    closing = ")" if opening == "(" else "]"
    depth, quote = 0, ""
    for position in range(start, len(text)):
        char = text[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return position
    return None


def _first_predicate(rest: str) -> str | None:
    """The bracketed predicate `rest` starts with."""
    stripped = rest.lstrip()
    end = _matching(stripped, 0) if stripped.startswith("[") else None
    return stripped[: end + 1] if end is not None else None


def _union_members(path: str) -> list[str]:
    """The paths `path` joins with `|` outside any predicate, parenthesis or string."""
    members, start, depth, quote = [], 0, 0, ""
    for index, char in enumerate(path):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "|" and depth == 0:
            members.append(path[start:index])
            start = index + 1
    return [*members, path[start:]]
