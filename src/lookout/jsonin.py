"""Client JSON, decoded one way on every door (REST and /api bodies, MCP messages and cursors).

`json.loads` takes more than JSON and fails in more ways than `JSONDecodeError`, and each gap
was a 500 (issue #22, tests/reliability/test_hostile_values.py):
- an integer longer than Python's digit limit (`sys.get_int_max_str_digits()`, 4300 by default)
  raises a bare ValueError: a 5,000-digit integer in a login body;
- nesting deeper than the interpreter's stack raises RecursionError;
- `NaN`, `Infinity` and numbers past the float range (`1e999`) decode to floats JSON does not
  have (RFC 8259) and Postgres jsonb refuses;
- bytes that are not UTF-8 raise UnicodeDecodeError.
Each is `NotJson` here, saying what to fix. Then every string must be storable (textsafe).

The standard library's decoder stays (no new dependency): the two hooks below run only for
floats and for the NaN/Infinity constants, never for strings, integers or structure.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from lookout import errors, textsafe


class NotJson(errors.InvalidInput):
    """The request body must be JSON."""


class Unstorable(errors.InvalidInput):
    """Text may not contain NUL characters or unpaired surrogates."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJson(f"The number {text[:20]}… is out of range; numbers must be finite.")
    return value


def _constant(name: str) -> Any:
    raise NotJson(f"JSON has no {name}; numbers must be finite.")


def loads(raw: bytes | str) -> Any:
    """The decoded document; NotJson (invalid_input) for anything that is not finite JSON."""
    try:
        return json.loads(raw, parse_float=_finite, parse_constant=_constant)
    except NotJson:
        raise
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise NotJson() from None
    except RecursionError:
        raise NotJson("The request body is nested too deeply.") from None
    except ValueError:  # the integer digit limit (the only other ValueError json raises)
        digits = sys.get_int_max_str_digits()
        raise NotJson(f"Integers in the request body may have at most {digits} digits.") from None


def decode(raw: bytes | str) -> Any:
    """`loads`, then Unstorable (invalid_input naming the field) for text Postgres cannot store."""
    body = loads(raw)
    if (where := textsafe.unstorable(body)) is not None:
        raise Unstorable(textsafe.MESSAGE, fields={where: [textsafe.MESSAGE]})
    return body
