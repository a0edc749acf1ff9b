"""Two or more pages side by side: one markdown table whose rows are what the pages have in
common — prices, the same labelled facts ("Weight: 2 kg", a two-column spec table), matching
sections — then what only one of them has."""

from __future__ import annotations

import re
from typing import Any

from lookout.agent import fields, passages, reading

MAX_ROWS = 14
CELL_CHARS = 90
MAX_PRICES = 1  # the first price a page states: a product's own (delivery thresholds come later)
# Blanks before the label are taken whole (possessive): giving them back one by one to the label
# was cubic on "-" and a long blank run.
_LABELLED = re.compile(
    r"^\s*+(?:[-*+]\s++)?\*{0,2}([^:|*]{2,40}?)\*{0,2}\s*+[:\uff1a]\s*(.{1,200})$"
)


def _key(label: str) -> str:
    return re.sub(r"[^\w]+", " ", label.lower()).strip()


def _cells(row: str) -> list[str]:
    """`row` split at its pipes, the blanks next to a pipe dropped: what the regex split on
    "blanks, pipe, blanks" gave, without its rescan of a long blank run from each blank
    (quadratic)."""
    parts = row.split("|")
    if len(parts) == 1:
        return parts
    return [parts[0].rstrip(), *(part.strip() for part in parts[1:-1]), parts[-1].lstrip()]


def _cell(text: str) -> str:
    text = " ".join(text.replace("|", "/").split())
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1].rstrip() + "…"


def facts(every: list[passages.Passage]) -> dict[str, tuple[str, str]]:
    """{normalized label: (label, value)} from "Label: value" lines and two-column rows."""
    found: dict[str, tuple[str, str]] = {}
    for passage in every:
        label, value = "", ""
        if passage.kind == "row":
            cells = [c for c in _cells(passage.text.strip().strip("|")) if c != ""]
            if len(cells) == 2:
                label, value = cells
        elif (match := _LABELLED.match(passage.text)) is not None:
            label, value = match.groups()
            if passage.text[: match.start(1)].endswith("**"):  # "**Price:** €10": the bold
                value = value.removeprefix("**")  # closes after the colon, not in the value
        key = _key(label.strip("* "))
        if key and value.strip() and key not in found:
            found[key] = (label.strip("* "), value.strip())
    return found


def _sections(every: list[passages.Passage]) -> dict[str, tuple[str, str]]:
    """{normalized heading: (heading, its first words)}."""
    found: dict[str, tuple[str, str]] = {}
    for passage in every:
        key = _key(passage.section)
        if (
            key
            and key not in found
            and passage.kind in ("text", "item")
            and key != _key(passage.title)
        ):
            found[key] = (passage.section, passage.text.lstrip("-*+ "))
    return found


def _prices(every: list[passages.Passage]) -> str:
    seen: list[str] = []
    for passage in every:
        value = fields.value_in("price", passage.text)
        if value and value not in seen:
            seen.append(value)
        if len(seen) >= MAX_PRICES:
            break
    return ", ".join(seen)


def compare(pages: list[dict[str, Any]]) -> str:
    """The read pages compared, as markdown (failed pages named under the table)."""
    read = [p for p in pages if not p.get("error")]
    failed = [p for p in pages if p.get("error")]
    split = [
        passages.split(p.get("markdown") or "", url=p["url"], title=p.get("title") or "")
        for p in read
    ]
    names = [_cell(p.get("title") or reading.host(p["url"])) for p in read]
    out = [f"Comparing {len(read)} pages:"] if read else []
    if len(read) >= 2:
        out.append(_table(names, split))
        out += _only(names, split)
    elif read:
        out.append(reading.lead(read[0], split[0]))
    out += [f"- I couldn't read {reading.host(p['url'])}: {p['error']['message']}" for p in failed]
    out.append("Sources: " + "; ".join(reading.link(p) for p in read) if read else "")
    return "\n\n".join(line for line in out if line)


def _table(names: list[str], split: list[list[passages.Passage]]) -> str:
    rows: list[list[str]] = []
    prices = [_prices(every) for every in split]
    if sum(1 for p in prices if p) >= 1:
        rows.append(["Price", *[p or "—" for p in prices]])
    for table in (facts, _sections):
        per_page = [table(every) for every in split]
        shared = [k for k in per_page[0] if sum(k in other for other in per_page) >= 2]
        shared += [
            k for other in per_page[1:] for k in other
            if k not in shared and sum(k in o for o in per_page) >= 2
        ]  # fmt: skip
        for key in dict.fromkeys(shared):
            if len(rows) >= MAX_ROWS:
                break
            label = next(found[key][0] for found in per_page if key in found)
            cells = [_cell(found[key][1]) if key in found else "—" for found in per_page]
            rows.append([_cell(label), *cells])
    if len(rows) == 0:
        words = [str(sum(len(p.text.split()) for p in every)) + " words" for every in split]
        rows.append(["Length", *words])
    head = "| | " + " | ".join(names) + " |"
    rule = "|---|" + "---|" * len(names)
    body = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([head, rule, *body])


def _only(names: list[str], split: list[list[passages.Passage]]) -> list[str]:
    """What only one page has: its sections the others lack."""
    keyed = [_sections(every) for every in split]
    out = []
    for name, mine in zip(names, keyed, strict=True):
        alone = [v[0] for k, v in mine.items() if sum(k in other for other in keyed) == 1]
        if alone:
            out.append(f"Only on **{name}**: " + "; ".join(alone[:6]) + ".")
    return out
