"""The SGF game record both the reader and the writer use: `SgfGame` (the main line of one game),
the colors as fastgo.board numbers them, and `SgfError`."""
from dataclasses import dataclass, field

BLACK = 1  # the colors as fastgo.board numbers them
WHITE = 2
COLOR_LETTERS = {BLACK: "B", WHITE: "W"}
DEFAULT_SIZE = 19        # SZ absent: FF[4] says 19


class SgfError(ValueError):
    """Malformed or unsupported SGF. `offset` is a 0-based character offset (or None);
    `line` and `col` are 1-based."""

    def __init__(self, message, text=None, offset=None):
        self.offset = offset
        self.line = self.col = None
        if text is not None and offset is not None:
            offset = max(0, min(offset, len(text)))
            self.line = text.count("\n", 0, offset) + 1
            self.col = offset - (text.rfind("\n", 0, offset) + 1) + 1
            message = f"{message} at line {self.line}, col {self.col} (offset {offset})"
        super().__init__(message)


@dataclass
class SgfGame:
    """The main line of one SGF game. Moves are (color, move) with color BLACK / WHITE and move
    the fastgo index (pass = size * size). `comments[k]` is the comment on the position after k
    moves (0: the root, before any move)."""
    size: int = DEFAULT_SIZE
    komi: float | None = None          # None: the file gives no KM
    rules: str = ""
    black_player: str = ""
    white_player: str = ""
    result: str = ""
    date: str = ""
    handicap: int = 0
    first_player: int | None = None    # PL: who moves first when the file says so
    setup_black: list = field(default_factory=list)
    setup_white: list = field(default_factory=list)
    moves: list = field(default_factory=list)
    comments: dict = field(default_factory=dict)
