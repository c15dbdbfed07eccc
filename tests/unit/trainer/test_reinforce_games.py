"""The hand-built game records of the trainer tests (the game_record, random_moves and
write_shard fixtures: the policy-only worker's shape, full = 1 on the learner's moves) read back
from a shard as written."""
from __future__ import annotations

import numpy as np

from rundata.shards import read_shard


def test_records_read_back(tmp_path, game_record, random_moves, write_shard):
    rng = np.random.default_rng(3)
    records = [game_record(5, 0.5, random_moves(5, 0.5, rng, length=9), learner)
               for learner in (1, -1, 0)]
    path = write_shard(tmp_path, records, "a.shard", size=5, komi=0.5)
    games = read_shard(path).games
    assert [g.full.tolist() for g in games] == [r.full.tolist() for r in records]
    assert games[0].full[0] == 1 and games[0].full[1] == 0
    assert games[1].full[0] == 0 and games[1].full[1] == 1
    assert games[2].full.all()
