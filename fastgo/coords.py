"""Board coordinates as people and files write them: GTP vertices ("D4", "pass") and SGF points
("dd"), to and from the move index used everywhere else (move = row * N + col, row 0 the top row,
PASS = N * N). Called by fastgo.sgf, the GTP engine and its client. Pure Python.
"""

# GTP column letters: A..Z without I, so 25 columns at most.
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
MAX_GTP_SIZE = len(GTP_COLUMNS)
# SGF point letters: a..z then A..Z (FF[4] allows boards up to 52x52).
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_SGF_SIZE = len(SGF_LETTERS)


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
    if vertex[:1] not in tuple(GTP_COLUMNS) or not (number_text.isascii() and number_text.isdigit()):
        raise ValueError(f"invalid GTP vertex {text!r}")
    col = GTP_COLUMNS.index(vertex[0])
    number = int(number_text)
    if col >= size or not 1 <= number <= size:
        raise ValueError(f"GTP vertex {text!r} is off a {size}x{size} board")
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
        raise ValueError(f"invalid SGF point {text!r}")
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
