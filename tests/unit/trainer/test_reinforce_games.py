"""Game records shaped like the policy-only worker's (one network per colour; full = 1 on the
learner's moves), built by hand for the REINFORCE, pool and value-stage tests; and a check that
the shard reader accepts them."""
from __future__ import annotations

import os

import numpy as np

from fastgo.game import Game
from fastgo.replay import check_game
from fastgo.shards import GameRecord, ShardWriter, read_shard


def game_record(size, komi, moves, learner, *, values=None, versions=(1, 0), seed=0):
    """A finished game: `learner` 1 (Black), -1 (White) or 0 (both colours) marks full = 1 on
    the learner's moves; every move's one-hot policy is the move played."""
    moves = np.asarray(moves, dtype=np.int16)
    bad, reason, over, score, ownership = check_game(size, komi, moves)
    assert bad < 0, f"move {bad} is {reason}"
    assert over, "a record game must be over (two passes or the move cap)"
    count = len(moves)
    mover = np.where(np.arange(count) % 2 == 0, 1, -1)
    full = np.ones(count, np.uint8) if learner == 0 else (mover == learner).astype(np.uint8)
    root_value = np.zeros(count, np.float32) if values is None else np.asarray(values, np.float32)
    return GameRecord(size=size, komi=float(komi), moves=moves, full=full, root_value=root_value,
                      policy_count=np.ones(count, np.uint16), policy_moves=moves.copy(),
                      policy_visits=np.ones(count, np.float32),
                      winner=1 if score > 0 else (-1 if score < 0 else 0), score=float(score),
                      end="passes" if moves[-2:].tolist() == [size * size] * 2 else "move_cap",
                      ownership=ownership, versions=list(versions), seed=seed)


def random_moves(size, komi, rng, *, length):
    """Up to `length` random legal (superko) non-pass moves, then two passes."""
    game = Game(size, komi)
    moves = []
    for _ in range(length):
        legal = np.flatnonzero(game.legal_moves()[:size * size])
        if not len(legal):
            break
        move = int(rng.choice(legal))
        game.play(move)
        moves.append(move)
    return moves + [size * size, size * size]


def write_shard(directory, records, name, *, size, komi):
    os.makedirs(directory, exist_ok=True)
    writer = ShardWriter(directory, prefix="test", size=size, komi=komi)
    for record in records:
        writer.add(record)
    return writer.close(name)


def test_records_read_back(tmp_path):
    rng = np.random.default_rng(3)
    records = [game_record(5, 0.5, random_moves(5, 0.5, rng, length=9), learner)
               for learner in (1, -1, 0)]
    path = write_shard(tmp_path, records, "a.shard", size=5, komi=0.5)
    games = read_shard(path).games
    assert [g.full.tolist() for g in games] == [r.full.tolist() for r in records]
    assert games[0].full[0] == 1 and games[0].full[1] == 0
    assert games[1].full[0] == 0 and games[1].full[1] == 1
    assert games[2].full.all()
