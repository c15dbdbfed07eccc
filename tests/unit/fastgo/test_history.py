"""fastgo.history: the one store of earlier positions for positional superko, checked against a
plain Python model (a list and a Counter), with hashes chosen to share home slots."""
import collections
import copy
import pathlib
import pickle
import random
import re

import numpy as np
import pytest

from fastgo.board import Board
from fastgo.game import Game
from fastgo.history import PositionHistory

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_repetition_is_found_and_a_new_position_is_not():
    h = PositionHistory(8)
    h.push(0x1234)
    h.push(0xFEDCBA9876543210)
    assert 0x1234 in h and 0xFEDCBA9876543210 in h
    assert 0x1235 not in h
    assert len(h) == 2 and h.hashes() == [0x1234, 0xFEDCBA9876543210]


def test_hash_zero_and_hostile_keys():
    h = PositionHistory(4)
    assert 0 not in h                 # 0 marks an empty slot: kept apart, never a false match
    h.push(0)
    assert 0 in h and h.count(0) == 1
    h.pop()
    assert 0 not in h
    assert "x" not in h and -1 not in h and 2 ** 64 not in h


def test_collisions_on_one_home_slot_survive_removal_in_any_order():
    # capacity 8 -> 16 slots: these keys share low bits and so one home slot (key & 15).
    keys = [0x10 * k + 5 for k in range(1, 8)]
    h = PositionHistory(8)
    for k in keys:
        h.push(k)
    assert all(k in h for k in keys)
    assert (0x10 * 9 + 5) not in h    # same home slot, absent: the probe stops at an empty slot
    for k in reversed(keys[3:]):      # pop the newest: the earlier ones stay findable
        assert h.pop() == k
        assert k not in h
        assert all(j in h for j in keys[:keys.index(k)])
    for k in range(3):                # window pushes drop the oldest: a removal mid-cluster
        h.push(0x100 * (k + 1) + 5, window=True)
    assert len(h) == 6 and all(k in h for k in keys[:3])
    for k in range(5):                # 6 + 5 positions in 8: keys[0..2] drop out, oldest first
        h.push(0x990 + k, window=True)
    assert not any(k in h for k in keys[:3])
    assert all((0x100 * (k + 1) + 5) in h for k in range(3))


def test_repeated_positions_are_counted():
    h = PositionHistory(5)
    for k in (7, 7, 9, 7):
        h.push(k)
    assert h.count(7) == 3 and h.count(9) == 1
    h.pop()
    h.pop()
    assert h.count(7) == 2 and 9 not in h


def test_reset_and_copy():
    h = PositionHistory(4)
    for k in (1, 2, 3):
        h.push(k)
    c = h.copy()
    h.clear()
    assert len(h) == 0 and 1 not in h and h.hashes() == []
    assert c.hashes() == [1, 2, 3] and 2 in c
    h.push(2)
    assert h.hashes() == [2] and c.count(2) == 1


def test_copies_and_pickles_of_a_game_keep_its_positions():
    game = Game(5, komi=0.5)
    for move in (0, 1, 2):
        game.play(move)
    for clone in (copy.deepcopy(game), pickle.loads(pickle.dumps(game)), game.copy()):
        assert clone.hash_history == game.hash_history and clone.history.capacity == 51
        clone.play(3)
        assert len(clone.history) == 5 and len(game.history) == 4


def test_capacity_is_a_bound():
    with pytest.raises(ValueError, match="capacity"):
        PositionHistory(0)
    h = PositionHistory(2)
    h.push(1)
    h.push(2)
    with pytest.raises(OverflowError, match="full"):
        h.push(3)
    assert h.hashes() == [1, 2] and h.capacity == 2
    h.push(3, window=True)
    assert h.hashes() == [2, 3] and 1 not in h
    h.pop()
    h.pop()
    with pytest.raises(IndexError, match="empty"):
        h.pop()


@pytest.mark.parametrize("seed", range(6))
def test_random_operations_match_a_python_model(seed):
    rnd = random.Random(seed)
    cap = rnd.choice((1, 3, 16, 50))
    h = PositionHistory(cap)
    model = []
    # Keys equal modulo 128 share one home slot at every capacity here: long probe chains.
    pool = [(rnd.randrange(4) << 40) + rnd.randrange(3) * 128 + 3 for _ in range(12)]
    pool += [0, 2 ** 64 - 1]
    for _ in range(3000):
        op = rnd.random()
        key = rnd.choice(pool)
        if op < 0.45:
            h.push(key, window=True)
            model.append(key)
            del model[:max(0, len(model) - cap)]
        elif op < 0.75:
            if model:
                assert h.pop() == model.pop()
        elif op < 0.77:
            h.clear()
            model.clear()
        else:
            counts = collections.Counter(model)
            assert (key in h) == (key in counts)
            assert h.count(key) == counts[key]
    assert h.hashes() == model


def test_strike_repeats_clears_the_moves_that_recreate_a_position():
    # A point whose move would recreate a held position is struck; the others and the pass stay.
    game = Game(4, komi=0.5)
    board = Board(4, 0.5)
    mask = board.legal_moves()
    h = PositionHistory(4)
    h.push(board.hash_after(5))
    h.strike_repeats(board, mask)
    assert mask[5] == 0 and mask.sum() == 16      # 16 points + pass, minus point 5
    with pytest.raises(ValueError, match="entries"):
        game.history.strike_repeats(game.board, np.ones(9, np.uint8))


def test_game_superko_goes_through_its_history():
    # Every position of the game is in its history, the current one last; undo takes it out.
    game = Game(2, komi=0.0)
    game.play(0)                      # B a1
    game.play(3)                      # W b2
    assert len(game.history) == 3 and game.hash_history == game.history.hashes()
    game.undo()
    assert len(game.history) == 2 and game.history.hashes()[-1] == game.board.position_hash


def _sources():
    for path in sorted((ROOT / "fastgo").glob("*")):
        if path.suffix in (".py", ".pyx", ".pxd") and path.stem != "history":
            yield path, path.read_text()


def test_no_superko_store_outside_the_history_module():
    # The bit filter, the open-addressing probe and the dict of seen hashes lived in four
    # modules; only fastgo/history.pyx keeps earlier positions now.
    for path, text in _sources():
        assert not re.search(r">> 6\) & 63", text), f"{path.name}: a hash bit filter"
        assert not re.search(r"\bbucket\b", text), f"{path.name}: a hash table probe"
        assert not re.search(r"\b_seen\b|history_filter", text), f"{path.name}: a superko set"
    users = {"game.py": "from fastgo.history import", "mcts.pyx": "from fastgo.history cimport",
             "policy_play.pyx": "from fastgo.history cimport",
             "replay.pyx": "from fastgo.history cimport"}
    for name, line in users.items():
        assert line in (ROOT / "fastgo" / name).read_text(), f"{name} does not use fastgo.history"
