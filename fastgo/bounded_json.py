"""JSON text read within bounds, and written finite: every JSON reader of the project calls
`loads`, which checks the text's size and its nesting before json.loads runs; every JSON writer
calls `dumps`, which writes a NaN or an infinity as null (JSON has no such numbers, and a
browser's JSON.parse refuses the NaN and Infinity json.dumps writes by default). json recurses once per array or object
level and so depends on how deep the caller's stack already is; a fixed depth far below the
interpreter's limit, measured by a linear scan without recursion, makes that irrelevant. Stdlib
only.
"""
from __future__ import annotations

import json
import math
import re
from itertools import accumulate

MAX_DEPTH = 64            # arrays and objects inside each other; the project's formats need < 8
MAX_SIZE = 1 << 20        # bytes of a bytes text, characters of a str, unless the caller says
# A string: its quote, any run of plain characters and escapes (a backslash and the character
# after it), and its closing quote when there is one (an unclosed string runs to the end).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r'[^\[\]{}]+')
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class JSONRefused(ValueError):
    """A JSON text refused before or while parsing; its message is one line that says why
    (too large, nested too deep, not UTF-8, or json's own error)."""


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text` outside its strings (escaped quotes
    and brackets inside strings count for nothing): the brackets' running sum. On a valid prefix
    of a JSON text it is the depth json.loads reaches there, so it never underestimates what the
    decoder would recurse into. Linear time, no recursion."""
    marks = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not marks:
        return 0
    return max(0, max(accumulate(_STEP[c] for c in marks.encode("ascii"))))


def check(text, *, max_depth: int = MAX_DEPTH, max_size: int = MAX_SIZE) -> str:
    """`text` (str, or bytes decoded as UTF-8) once its size and nesting are within bounds;
    JSONRefused otherwise."""
    if len(text) > max_size:
        unit = "bytes" if isinstance(text, (bytes, bytearray, memoryview)) else "characters"
        raise JSONRefused(f"{len(text)} {unit}, over the limit of {max_size}")
    if not isinstance(text, str):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise JSONRefused(f"not UTF-8 (byte {err.start})") from None
    if nesting_depth(text) > max_depth:
        raise JSONRefused(f"nested deeper than {max_depth} arrays and objects")
    return text


def loads(text, *, max_depth: int = MAX_DEPTH, max_size: int = MAX_SIZE, **options):
    """json.loads(text, **options) of a text within bounds (see check). Every failure is a
    JSONRefused (a ValueError) with a one-line message: the bounds, UTF-8, and json's own
    errors (an integer of more digits than Python converts among them)."""
    text = check(text, max_depth=max_depth, max_size=max_size)
    try:
        return json.loads(text, **options)
    except RecursionError:      # not reached within the bounds; kept so nothing escapes
        raise JSONRefused("nested too deep to parse") from None
    except JSONRefused:
        raise
    except ValueError as err:
        raise JSONRefused(" ".join(str(err).split())[:200]) from None


def finite(value):
    """`value` with every float that is not finite (NaN, +-inf) in it replaced by None, through
    dicts, lists and tuples (tuples become lists, as json writes them); anything else as it is.
    The contract of everything the project writes as JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value, **options) -> str:
    """json.dumps(value, **options) with every non-finite float written as null (`finite`);
    json's allow_nan=False behind it, so nothing non-finite can be written."""
    options.pop("allow_nan", None)
    return json.dumps(finite(value), allow_nan=False, **options)
