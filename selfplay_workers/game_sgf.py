"""SGF export of a self-play game record (inference_server.experience.GameRecord): the moves,
the result, and on each move a comment with its search's root visits and root value."""
from __future__ import annotations

from fastgo.atomic import atomic_write
from fastgo.board import BLACK, WHITE
from fastgo.sgf import SgfGame, write_sgf


def game_sgf_text(record) -> str:
    nn = record.size * record.size
    moves, comments = [], {}
    starts = [0]
    for count in record.policy_count:
        starts.append(starts[-1] + int(count))
    for k, move in enumerate(record.moves):
        color = BLACK if k % 2 == 0 else WHITE
        moves.append((color, int(move)))
        visits = int(record.policy_visits[starts[k]:starts[k + 1]].sum())
        kind = "full" if record.full[k] else "cheap"
        comments[k + 1] = (f"{kind} search, visits {visits}, root value "
                           f"{float(record.root_value[k]):+.3f} (side to move)")
    if record.end == "resign":
        result = ("B" if record.winner > 0 else "W") + "+R"
    elif record.winner == 0:
        result = "0"
    else:
        result = ("B" if record.winner > 0 else "W") + f"+{abs(record.score):g}"
    game = SgfGame(size=record.size, komi=record.komi, rules="Tromp-Taylor (positional superko)",
                   black_player=f"fastgo v{record.versions[0] if record.versions else 0}",
                   white_player=f"fastgo v{record.versions[-1] if record.versions else 0}",
                   result=result, moves=moves, comments=comments)
    assert all(0 <= m <= nn for _, m in moves)
    return write_sgf(game)


def write_game_sgf(record, path):
    """Writes the SGF atomically (temporary name, rename)."""
    text = game_sgf_text(record)
    atomic_write(path, lambda handle: handle.write(text), binary=False, suffix=".sgf")
