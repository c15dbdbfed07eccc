"""How a recorded game ended is read from its moves: a record that claims two passes or the move
cap must show them (the score and ownership targets are taken from games that ended by two
passes), and no score may lie outside the board's range. Games that end at every legal point:
a pass at move 1, two passes at once, the cap, a resignation."""
import msgpack
import numpy as np
import pytest

from fastgo.game import Game
from fastgo.replay import check_game
from rundata.records import ShardError, check_record
from rundata.shards import GameRecord
from trainer.window import SCORED_ENDS, block_from_games

NN = 25


def good_record(**changes) -> GameRecord:
    """Two passes on 5x5: over, the empty board, White wins by komi 0.5."""
    fields = dict(size=5, komi=0.5, moves=np.array([NN, NN], np.int16), full=np.zeros(2, np.uint8),
                  root_value=np.zeros(2, np.float32), policy_count=np.zeros(2, np.uint16),
                  policy_moves=np.zeros(0, np.int16), policy_visits=np.zeros(0, np.float32),
                  winner=-1, score=-0.5, end="passes", ownership=np.zeros(NN, np.int8),
                  versions=[0], id="a" * 32, t_start=1.7e9, t_end=1.7e9 + 1)
    fields.update(changes)
    return GameRecord(**fields)


def decoded(record: GameRecord) -> dict:
    return msgpack.unpackb(record.to_msgpack(), raw=False)


def played(moves, end, size=5, komi=0.5):
    """A record of `moves` with the result the replay gives (resign: the mover at the end
    resigns)."""
    moves = np.asarray(moves, np.int16)
    _, _, over, score, owner = check_game(size, komi, moves)
    if end == "resign":
        game = Game(size, komi)
        for m in moves:
            game.play(int(m))
        winner = -1 if game.to_move == 1 else 1
    else:
        winner = 1 if score > 0 else (-1 if score < 0 else 0)
    n = len(moves)
    return good_record(moves=moves, full=np.zeros(n, np.uint8), root_value=np.zeros(n, np.float32),
                       policy_count=np.zeros(n, np.uint16), policy_moves=np.zeros(0, np.int16),
                       policy_visits=np.zeros(0, np.float32), winner=winner, score=float(score),
                       end=end, ownership=owner)


def cap_moves(size=5):
    """2 * N * N moves that never pass twice in a row: stones, then alternating passes and
    single stones until the cap (replayed legal)."""
    game = Game(size, 0.5)
    moves = []
    rng = np.random.default_rng(3)
    while len(moves) < 2 * size * size:
        legal = np.flatnonzero(game.legal_moves()[:size * size])
        move = int(rng.choice(legal)) if len(legal) and (not moves or moves[-1] == size * size
                                                         or rng.random() < 0.7) \
            else size * size
        if move == size * size and moves and moves[-1] == size * size:
            move = int(rng.choice(legal)) if len(legal) else move
        game.play(move)
        moves.append(move)
    return moves


@pytest.mark.parametrize("moves, end", [
    ([NN, NN], "passes"),                      # two passes at once: White wins by komi
    ([12, NN, NN], "passes"),                  # one stone, then two passes
    ([NN], "resign"),                          # a pass at move 1, then White resigns
    ([12], "resign"),
])
def test_games_that_end_at_every_legal_point_are_taken(moves, end):
    record = played(moves, end)
    checked = check_record(decoded(record), size=5, komi=0.5)
    assert checked.end == end and list(checked.moves) == moves


def test_a_game_at_the_cap_is_taken_and_gets_no_score_target():
    moves = cap_moves()
    assert len(moves) == 2 * NN and not (moves[-1] == NN and moves[-2] == NN)
    record = check_record(decoded(played(moves, "move_cap")), size=5, komi=0.5)
    passes = check_record(decoded(played([NN, NN], "passes")), size=5, komi=0.5)
    block = block_from_games([record, passes], 5, "cap")
    # only the game that ended by passes weighs in the score and ownership terms
    assert SCORED_ENDS == ("passes",) and block.score_known.tolist() == [0, 1]


@pytest.mark.parametrize("moves, end, why", [
    ([12, NN], "passes", "last two moves are not passes"),      # one pass is no end
    ([NN, NN], "move_cap", "ends at the move cap after 2 moves"),
    ([NN, 12, NN, NN], "move_cap", "ends at the move cap after 4 moves"),
])
def test_an_end_its_moves_do_not_show_is_refused(moves, end, why):
    record = decoded(played(moves, "passes" if moves[-2:] == [NN, NN] else "resign"))
    record["end"] = end
    if end == "passes":
        record["winner"], record["score"] = -1, -0.5
    with pytest.raises(ShardError, match=why):
        check_record(record, size=5, komi=0.5, check_rules=False)


@pytest.mark.parametrize("score", [25.6, -25.6, 1999.0, -26.0])
def test_a_score_outside_the_board_is_refused(score):
    # 5x5 with komi 0.5: a margin is at most 25 + 0.5 points either way
    record = decoded(played([12], "resign"))
    record["score"] = score
    with pytest.raises(ShardError, match="outside the board's range"):
        check_record(record, size=5, komi=0.5)
