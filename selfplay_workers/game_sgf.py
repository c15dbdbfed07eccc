"""SGF export of a self-play game record (rundata.shards.GameRecord): the moves,
the result, and on each move a comment: the kind of search, the played move's share of the
policy target (full searches) and the root value, or for
policy-only games (records with `players`) who sampled the move and the value head's output; the
last move's comment says how the game ended and its final margin."""
from __future__ import annotations

from fastgo.board import BLACK, WHITE
from fastgo.files import atomic_write
from fastgo.sgf import SgfGame, write_sgf

# How the game ended, said on its last move (rundata.records.ENDS).
ENDING_NOTES = {
    "passes": "the game ended by two passes: its final board is its area (Tromp-Taylor count)",
    "move_cap": "the game stopped at the move cap: the board is counted as it stands, not a "
                "settled area (no score or ownership target)",
    "resign": "the game ended by resignation (no score or ownership target)",
    "recorded": "the result is the record's own"}


def game_sgf_text(record) -> str:
    nn = record.size * record.size
    moves, comments = [], {}
    starts = [0]
    for count in record.policy_count:
        starts.append(starts[-1] + int(count))
    players = record.players
    for k, move in enumerate(record.moves):
        color = BLACK if k % 2 == 0 else WHITE
        moves.append((color, int(move)))
        value = f"{float(record.root_value[k]):+.3f} (side to move)"
        if players is not None:
            mover = "learner" if record.full[k] else "opponent"
            comments[k + 1] = f"policy sample by the {mover}, value head {value}"
            continue
        if not record.full[k]:
            comments[k + 1] = f"cheap search (no policy target), root value {value}"
            continue
        # The target is visit counts (PUCT) or probabilities (Gumbel): say the played move's share.
        target = record.policy_visits[starts[k]:starts[k + 1]]
        total = float(target.sum())
        played = target[record.policy_moves[starts[k]:starts[k + 1]] == move].sum()
        share = float(played) / total if total > 0 else 0.0
        comments[k + 1] = (f"full search, the move's share of the policy target {share:.2f}, "
                           f"root value {value}")
    if len(record.moves):
        last = len(record.moves)
        comments[last] = comments.get(last, "") + "; " + ENDING_NOTES.get(record.end, record.end) \
            + ("" if record.end == "resign" else f", Black's margin {float(record.score):+g}")
    if record.end == "resign":
        result = ("B" if record.winner > 0 else "W") + "+R"
    elif record.winner == 0:
        result = "0"
    else:
        result = ("B" if record.winner > 0 else "W") + f"+{abs(record.score):g}"
    black, white = _player_names(record)
    game = SgfGame(size=record.size, komi=record.komi, rules="Tromp-Taylor (positional superko)",
                   black_player=black, white_player=white,
                   result=result, moves=moves, comments=comments)
    assert all(0 <= m <= nn for _, m in moves)
    return write_sgf(game)


def _player_names(record) -> tuple[str, str]:
    """(black, white). Search self-play: the first and last model versions of the game.
    Policy-only play: `versions` is [learner, opponent] and `players` says who had black."""
    versions = record.versions or [0]
    players = record.players
    if players is None or players["learner"] == 0:
        return f"fastgo v{versions[0]}", f"fastgo v{versions[-1]}"
    learner = f"fastgo v{versions[0]} (learner)"
    opponent = f"{players['opponent']} v{versions[-1]} (opponent)"
    return (learner, opponent) if players["learner"] > 0 else (opponent, learner)


def write_game_sgf(record, path):
    """Writes the SGF atomically (temporary name, rename)."""
    text = game_sgf_text(record)
    atomic_write(path, lambda handle: handle.write(text), binary=False, suffix=".sgf")
