"""play_match's stop callback: the match ends at the next round of moves and counts only the
games that are over (the evaluator's bound on an ordered shutdown)."""
from play.match import RESIGN, play_match
from play.players import MatchSide

QUICK = {0, 3, 5}                       # games in which A resigns at its first move


class Side(MatchSide):
    """A resigns the QUICK games; otherwise both sides play the first legal point."""

    def __init__(self, resigns):
        self.resigns = resigns

    def moves(self, turn, boards):
        out = []
        for g in turn:
            if self.resigns and g in QUICK:
                out.append(RESIGN)
                continue
            game = boards[g]
            point = next((p for p in range(game.size * game.size) if game.is_legal(p)),
                         game.board.pass_move)
            out.append(point)
        return out


def stop_after(rounds):
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > rounds
    return stop, calls


def test_stop_counts_only_finished_games():
    stop, calls = stop_after(3)
    result = play_match(Side(True), Side(False), 8, size=5, komi=0.5, keep_records=True,
                        stop=stop)
    # Rounds 1 and 2 end the three QUICK games (A resigns its first move, as Black in round 1,
    # as White in round 2); the five others have 6 moves on a 5x5 board and are not over.
    assert len(calls) == 4
    assert result.games == len(QUICK) == 3
    assert (result.wins_a, result.wins_b, result.draws) == (0, 3, 0)
    assert all(game.is_over() for game in result.records)
    assert result.a_black == [True, False, False]       # games 0, 3 and 5: A is Black in even


def test_stop_at_once_counts_nothing():
    result = play_match(Side(True), Side(False), 4, size=5, komi=0.5, stop=lambda: True)
    assert (result.games, result.wins_a, result.wins_b, result.draws) == (0, 0, 0, 0)


def test_without_stop_every_game_is_counted():
    result = play_match(Side(True), Side(False), 4, size=5, komi=0.5, keep_records=True)
    assert result.games == 4
    assert all(game.is_over() for game in result.records)
