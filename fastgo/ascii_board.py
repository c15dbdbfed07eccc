"""Boards as ASCII diagrams, the fixtures' way of writing a position (minigo's load_board):
rows of '.', 'X' (black), 'O' (white), top row first, spaces ignored. Pure Python; the board
kernel's Board.from_ascii builds the board from what parse_ascii reads."""
from fastgo.constants import MAX_BOARD_SIZE, MIN_BOARD_SIZE


def parse_ascii(text):
    """(size, black move indices, white move indices) of a diagram (move = row * size + col);
    ValueError naming the row for a ragged row, an unknown character or a size outside
    MIN_BOARD_SIZE..MAX_BOARD_SIZE."""
    rows = [line.replace(" ", "").replace("\t", "") for line in text.strip().splitlines()]
    rows = [row for row in rows if row]
    size = len(rows)
    if not MIN_BOARD_SIZE <= size <= MAX_BOARD_SIZE:
        raise ValueError(f"from_ascii: {size} rows; board size must be "
                         f"{MIN_BOARD_SIZE}..{MAX_BOARD_SIZE}")
    black, white = [], []
    for r, row in enumerate(rows):
        if len(row) != size:
            raise ValueError(f"from_ascii: row {r} has {len(row)} points, expected {size}")
        for c, ch in enumerate(row):
            if ch == "X":
                black.append(r * size + c)
            elif ch == "O":
                white.append(r * size + c)
            elif ch != ".":
                raise ValueError(f"from_ascii: unexpected character {ch!r} in row {r}")
    return size, black, white
