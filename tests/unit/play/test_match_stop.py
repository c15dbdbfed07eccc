"""play_match's stop callback: the match ends at the next round of moves and counts only the
games that are over (the evaluator's bound on an ordered shutdown)."""
import pytest

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
    assert result.numbers == [0, 3, 5]


def test_stop_at_once_counts_nothing():
    result = play_match(Side(True), Side(False), 4, size=5, komi=0.5, stop=lambda: True)
    assert (result.games, result.wins_a, result.wins_b, result.draws) == (0, 0, 0, 0)


def test_without_stop_every_game_is_counted():
    result = play_match(Side(True), Side(False), 4, size=5, komi=0.5, keep_records=True)
    assert result.games == 4
    assert all(game.is_over() for game in result.records)


class Interrupting(Side):
    """Side, whose call in round `at` is interrupted (Ctrl-C while it thinks)."""

    def __init__(self, resigns, at):
        super().__init__(resigns)
        self.at, self.calls = at, 0

    def moves(self, turn, boards):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().moves(turn, boards)


def test_an_interrupt_goes_on_up_with_the_games_already_over():
    # B is interrupted in round 3: the QUICK games ended in rounds 1 and 2, the others go on
    with pytest.raises(KeyboardInterrupt) as caught:
        play_match(Side(True), Interrupting(False, at=3), 8, size=5, komi=0.5,
                   keep_records=True, game_offset=10)
    result = caught.value.match_result
    assert (result.games, result.wins_a, result.wins_b, result.draws) == (3, 0, 3, 0)
    assert result.numbers == [10 + g for g in sorted(QUICK)]
    assert result.a_black == [(10 + g) % 2 == 0 for g in sorted(QUICK)]
    assert len(result.records) == 3 and all(game.is_over() for game in result.records)


def test_an_interrupt_before_any_game_is_over_counts_none():
    with pytest.raises(KeyboardInterrupt) as caught:
        play_match(Interrupting(True, at=1), Side(False), 4, size=5, komi=0.5)
    assert caught.value.match_result.games == 0
