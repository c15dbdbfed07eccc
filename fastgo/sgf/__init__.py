"""SGF FF[4] games: read the main line of a file into an `SgfGame` record (fastgo.sgf.read) and
write one back (fastgo.sgf.write); the record and its error type are in fastgo.sgf.record. The
reader is bounded in time and memory by its input; see parse_sgf. Pure Python."""
from fastgo.sgf.read import (
                             MAX_CHARS,
                             MAX_DEPTH,
                             MAX_NODES,
                             MAX_SETUP_POINTS,
                             parse_sgf,
                             read_sgf_file,
                             to_game,
)
from fastgo.sgf.record import BLACK, COLOR_LETTERS, DEFAULT_SIZE, WHITE, SgfError, SgfGame
from fastgo.sgf.write import escape_text, record_from_game, write_sgf

__all__ = [
    "BLACK", "COLOR_LETTERS", "DEFAULT_SIZE", "MAX_CHARS", "MAX_DEPTH", "MAX_NODES",
    "MAX_SETUP_POINTS", "WHITE", "SgfError", "SgfGame", "escape_text", "parse_sgf",
    "read_sgf_file", "record_from_game", "to_game", "write_sgf",
]
