"""Board coordinates and numbers as people and files write them: GTP vertices ("D4", "pass") and
SGF points ("dd"), to and from the move index used everywhere else (move = row * N + col, row 0
the top row, PASS = N * N); and the one strict reader of decimal numbers in text (`parse_int`,
`parse_float`) that GTP, SGF and the CLI use, with its counterpart for numbers a JSON decoder
gave (`json_number`), which every JSON surface uses. Called by fastgo.sgf, the GTP engine and
its client. Pure Python.
"""
import math
import re

from fastgo.constants import MAX_BOARD_SIZE, MIN_BOARD_SIZE
from fastgo.files import escaped

# GTP column letters: A..Z without I, so 25 columns at most.
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
MAX_GTP_SIZE = len(GTP_COLUMNS)
# SGF point letters: a..z then A..Z (FF[4] allows boards up to 52x52).
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_SGF_SIZE = len(SGF_LETTERS)


# Numbers in text: ASCII digits only (str.isdigit() also accepts superscripts and other scripts,
# which int() then refuses), no '_' separators, no inner spaces, and a bounded length (int()
# refuses more than 4,300 digits, and a long number costs quadratic time to convert).
MAX_NUMBER_CHARS = 40
SHOWN_CHARS = 24          # of a text an error names
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")


def parse_int(text, *, low=None, high=None, what="number"):
    """A decimal integer written in ASCII ('12', '-3', '+7'; no spaces, no '_', at most
    MAX_NUMBER_CHARS characters) within [low, high] (either bound None: unbounded). Raises
    ValueError naming `what` and the text, never anything else; constant time per call."""
    if not isinstance(text, str) or len(text) > MAX_NUMBER_CHARS or not _INT_TEXT.fullmatch(text):
        raise ValueError(f"{what} {escaped(text, SHOWN_CHARS, quoted=True)} is not an integer")
    value = int(text)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{what} {escaped(text, SHOWN_CHARS, quoted=True)} is outside {low}..{high}")
    return value


def parse_float(text, *, low=None, high=None, what="number"):
    """A finite decimal number written in ASCII ('7.5', '-0.5', '1e3', '.5'; no 'nan', 'inf',
    '_' or spaces, at most MAX_NUMBER_CHARS characters) within [low, high]. Raises ValueError
    naming `what` and the text."""
    if not isinstance(text, str) or len(text) > MAX_NUMBER_CHARS or not _FLOAT_TEXT.fullmatch(text):
        raise ValueError(f"{what} {escaped(text, SHOWN_CHARS, quoted=True)} is not a number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{what} {escaped(text, SHOWN_CHARS, quoted=True)} is not a finite number")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{what} {escaped(text, SHOWN_CHARS, quoted=True)} is outside {low}..{high}")
    return value


FLOAT_MAX = 1.7976931348623157e308     # the largest finite float (sys.float_info.max)


def json_number(value, *, low=None, high=None, what="number", integer=False):
    """A number as a JSON decoder gives it (an int of any number of digits, or a float; bool
    refused), finite and within [low, high] (either bound None: the finite floats' range), as a
    float, or as an int where `integer` (a float refused then). The range is compared exactly
    before any conversion, so an integer of 401 digits is refused by its range, never by
    OverflowError. Raises ValueError naming `what`, never anything else."""
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (integer and not isinstance(value, int)):
        raise ValueError(f"{what} must be {kind}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number")
    lowest = -FLOAT_MAX if low is None else low
    highest = FLOAT_MAX if high is None else high
    if not lowest <= value <= highest:
        if low is None and high is None:
            raise ValueError(f"{what} is beyond a float's range")
        span = f"{'' if low is None else f'{low:g}'}..{'' if high is None else f'{high:g}'}"
        raise ValueError(f"{what} is outside {span}")
    return int(value) if integer else float(value)


def _check_size(size, limit):
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= limit:
        raise ValueError(f"board size {size!r} is not in 1..{limit}")


def _check_move(move, size):
    if not isinstance(move, int) or isinstance(move, bool) or not 0 <= move <= size * size:
        raise ValueError(f"move {move!r} is not in 0..{size * size} on a {size}x{size} board")


def pass_move(size):
    """The pass move index on a size x size board."""
    return size * size


def from_gtp(text, size):
    """GTP vertex ("D4", "d4", "pass") -> move index. Raises ValueError naming the text."""
    _check_size(size, MAX_GTP_SIZE)
    if not isinstance(text, str):
        raise ValueError(f"GTP vertex must be text, not {text!r}")
    vertex = text.strip().upper()
    if vertex == "PASS":
        return size * size
    number_text = vertex[1:]
    if vertex[:1] not in tuple(GTP_COLUMNS) or not 1 <= len(number_text) <= 2 \
            or not (number_text.isascii() and number_text.isdigit()):
        raise ValueError(f"invalid GTP vertex {escaped(text, SHOWN_CHARS, quoted=True)}")
    col = GTP_COLUMNS.index(vertex[0])
    number = int(number_text)
    if col >= size or not 1 <= number <= size:
        raise ValueError(f"GTP vertex {escaped(text, SHOWN_CHARS, quoted=True)} is off a "
                         f"{size}x{size} board")
    row = size - number
    return row * size + col


def to_gtp(move, size):
    """Move index -> GTP vertex ("D4", or "pass")."""
    _check_size(size, MAX_GTP_SIZE)
    _check_move(move, size)
    if move == size * size:
        return "pass"
    row, col = divmod(move, size)
    return f"{GTP_COLUMNS[col]}{size - row}"


def from_sgf(text, size):
    """SGF point ("dd"; "" or, on boards up to 19x19, "tt" for pass) -> move index.

    SGF letters count columns then rows from the top-left corner, as move indices do.
    Raises ValueError naming the text.
    """
    _check_size(size, MAX_SGF_SIZE)
    if not isinstance(text, str):
        raise ValueError(f"SGF point must be text, not {text!r}")
    if text == "" or (text == "tt" and size <= 19):
        return size * size
    if len(text) != 2 or text[0] not in SGF_LETTERS or text[1] not in SGF_LETTERS:
        raise ValueError(f"invalid SGF point {escaped(text, SHOWN_CHARS, quoted=True)}")
    col = SGF_LETTERS.index(text[0])
    row = SGF_LETTERS.index(text[1])
    if col >= size or row >= size:
        raise ValueError(f"SGF point {text!r} is off a {size}x{size} board")
    return row * size + col


def to_sgf(move, size):
    """Move index -> SGF point; a pass is written "" (the FF[4] form, read by every reader)."""
    _check_size(size, MAX_SGF_SIZE)
    _check_move(move, size)
    if move == size * size:
        return ""
    row, col = divmod(move, size)
    return SGF_LETTERS[col] + SGF_LETTERS[row]


def is_board_size(size) -> bool:
    """True for a board side the rules take: an integer in MIN_BOARD_SIZE..MAX_BOARD_SIZE
    (fastgo.constants; SIZE_RANGE prints it). Every check of a size a user or a file gives is
    this one."""
    return isinstance(size, int) and not isinstance(size, bool) \
        and MIN_BOARD_SIZE <= size <= MAX_BOARD_SIZE
