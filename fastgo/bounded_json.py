"""JSON text read within bounds, and written finite: every JSON reader of the project calls
`loads`, which checks the text's size and its nesting before json.loads runs; every JSON
writer calls `dumps`, which writes a NaN or an infinity as null (JSON has no such numbers, and
a browser's JSON.parse refuses the NaN and Infinity json.dumps writes by default). json
recurses once per array or object level and so depends on how deep the caller's stack already
is; a fixed depth far below the interpreter's limit, measured by a linear scan without
recursion, makes that irrelevant. Stdlib only.
"""
from __future__ import annotations

import json
import math
import re
import sys
from itertools import accumulate

MAX_DEPTH = 64            # arrays and objects inside each other; the project's formats need < 8
MAX_SIZE = 1 << 20        # bytes of a bytes text, characters of a str, unless the caller says
# A string: its quote, any run of plain characters and escapes (a backslash and the character
# after it), and its closing quote when there is one (an unclosed string runs to the end).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r'[^\[\]{}]+')
_FLOAT_DIGITS = len(str(int(sys.float_info.max)))   # 309: digits of the largest finite float
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


def _integer(text: str):
    """A JSON integer's text as an int, or as -inf/inf where it is beyond a float's range, as
    json reads 1e400: an integer of 401 digits then meets every reader's check for a finite
    number (coords.json_number) and never a float() that raises OverflowError. JSON writes no
    leading zeros, so the count of digits bounds the value; constant time past 309 digits."""
    digits = len(text) - (text[:1] == "-")
    if digits < _FLOAT_DIGITS:
        return int(text)
    if digits == _FLOAT_DIGITS and abs(value := int(text)) <= sys.float_info.max:
        return value
    return -math.inf if text[:1] == "-" else math.inf


def loads(text, *, max_depth: int = MAX_DEPTH, max_size: int = MAX_SIZE, **options):
    """json.loads(text, **options) of a text within bounds (see check), an integer beyond a
    float's range read as -inf or inf (unless options give parse_int). Every failure is a
    JSONRefused (a ValueError) with a one-line message: the bounds, UTF-8, and json's own
    errors."""
    text = check(text, max_depth=max_depth, max_size=max_size)
    options.setdefault("parse_int", _integer)
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
