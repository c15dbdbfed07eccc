"""Golden tactics for the batched search with a rollout evaluator (uniform priors, value from one
random playout): positions in ASCII, the move a correct search must find, and a snapshot of the
root visit distribution for a fixed seed in tests/golden/mcts_tactics.json, so any change of the
search's behaviour shows up as a diff. FASTGO_REGEN_GOLDEN=1 rewrites the snapshot (review it).

The same search is run through a Python evaluator that rebuilds the position from the planes it
receives (under a random symmetry) and plays it out with the board's own playout, so the
symmetry handling of the callable path is exercised too.
"""
import json
import os
import pathlib

import numpy as np
import pytest

from fastgo.board import BLACK, WHITE, Board, Random
from fastgo.mcts import BatchedSearch
from fastgo.search_settings import SearchSettings

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "golden" / "mcts_tactics.json"

# name: (position, komi, side to move, visits, expected move)
TACTICS = {
    # White's two stones have one liberty at (2, 0): capture them.
    "capture_in_atari": ("""
        .....
        .XX..
        .OOX.
        .XX..
        .....""", 0.5, BLACK, 1000, 10),
    # Black's two stones have one liberty at (2, 3): extend to join the wall.
    "save_own_group": ("""
        .....
        .OO.X
        OXX.X
        .OO.X
        ....X""", 0.5, BLACK, 2000, 13),
    # Both groups share their last liberty, the centre: whoever takes it captures.
    "last_point_3x3": ("""
        XXO
        X.O
        XOO""", 0.5, BLACK, 300, 4),
}
SEED = 7


def _search(name, evaluator):
    text, komi, to_move, visits, _ = TACTICS[name]
    board = Board.from_ascii(text, komi=komi, to_move=to_move)
    search = BatchedSearch(games=1, size=board.size, komi=komi, seed=SEED,
                           settings=SearchSettings(noise_weight=0.0))
    search.set_position(0, board)
    search.run(evaluator, visits)
    return search


def _load_golden():
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


@pytest.mark.parametrize("name", sorted(TACTICS))
def test_tactic_with_c_rollouts(name):
    expected_move = TACTICS[name][4]
    search = _search(name, "rollout")
    visits = search.root_visits(0)
    assert search.choose_move(0, 0.0) == expected_move
    assert visits[expected_move] > 0.5 * visits.sum()
    snapshot = {"expected_move": expected_move, "visits": visits.tolist(),
                "root_value": round(float(search.root_value(0)), 4)}
    if os.environ.get("FASTGO_REGEN_GOLDEN"):
        golden = _load_golden()
        golden[name] = snapshot
        GOLDEN.write_text("{\n" + ",\n".join(
            f"  {json.dumps(key)}: {json.dumps(golden[key], sort_keys=True)}"
            for key in sorted(golden)) + "\n}\n")
    golden = _load_golden()
    assert name in golden, "no snapshot: run with FASTGO_REGEN_GOLDEN=1 and review the diff"
    assert snapshot["expected_move"] == golden[name]["expected_move"]
    assert snapshot["visits"] == golden[name]["visits"]
    assert snapshot["root_value"] == pytest.approx(golden[name]["root_value"], abs=1e-3)


class PlanesRolloutEvaluator:
    """Uniform logits; value = one random playout of the position the AlphaZero planes show
    (plane 0: stones of the side to move, 1: the opponent's, 16: 1 if Black is to move)."""

    def __init__(self, komi, seed):
        self.komi = komi
        self.rng = Random(seed)

    def __call__(self, planes):
        count, n = len(planes), planes.shape[2]
        values = np.zeros(count, np.float32)
        for i in range(count):
            me = BLACK if planes[i, 16, 0, 0] else WHITE
            own = np.flatnonzero(planes[i, 0].reshape(-1)).tolist()
            opp = np.flatnonzero(planes[i, 1].reshape(-1)).tolist()
            board = Board(n, self.komi)
            board.setup(*((own, opp) if me == BLACK else (opp, own)))
            board.to_move = me
            board.playout(self.rng)
            score = board.score()
            values[i] = 0.0 if score == 0 else (1.0 if (score > 0) == (me == BLACK) else -1.0)
        return np.zeros((count, n * n + 1), np.float32), values


@pytest.mark.parametrize("name", ["capture_in_atari", "last_point_3x3"])
def test_tactic_with_a_python_rollout_evaluator(name):
    komi, expected_move = TACTICS[name][1], TACTICS[name][4]
    search = _search(name, PlanesRolloutEvaluator(komi, seed=3))
    assert search.choose_move(0, 0.0) == expected_move
