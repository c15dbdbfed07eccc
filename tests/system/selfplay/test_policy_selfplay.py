"""Policy-only self-play (AlphaGo pipeline): the sampler kernel (fastgo.policy_play), the opponent
pool, the players field of shards, and a real `fastgo serve` + `fastgo selfplay` run with
[trainer] algorithm = "reinforce" on 5x5."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from fastgo.board import BLACK, WHITE
from fastgo.game import Game
from fastgo.policy_play import PHASE_LEARNER, PHASE_OPPONENT, PolicyPlay, distribution, sample_moves
from fastgo.replay import check_game
from rundata.pool import PoolError, draw_opponent, read_pool
from rundata.shards import GameRecord, ShardError, ShardWriter, read_shard


def _acceptable(game):
    """Legal board points (superko included) that do not fill the mover's own eye."""
    board = game.board
    legal = np.flatnonzero(game.legal_moves()[:-1])
    return [int(m) for m in legal if not board.is_eye(int(m), board.to_move)]


def _play_out(play, logits_rng, phases):
    """Runs every game of `play` to its end with random logits; returns the steps taken."""
    n = play.size
    buf = np.zeros((play.num_games, play.planes, n, n), dtype=np.uint8)
    steps, phase = 0, phases[0]
    while play.live:
        count = play.collect(buf, phase)
        if len(phases) == 2:
            phase = phases[1] if phase == phases[0] else phases[0]
        logits = (logits_rng.normal(size=(count, n * n + 1)) * 3).astype(np.float32)
        play.apply(logits, logits_rng.uniform(-1, 1, count).astype(np.float32))
        steps += 1
        assert steps < 4 * n * n + 4
    return steps


@pytest.mark.parametrize("size", [5, 7])
def test_games_are_legal_never_fill_own_eyes_and_score_as_the_rules(size):
    play = PolicyPlay(games=24, size=size, komi=0.5, floor=1e-3)
    play.reset([BLACK if g % 2 == 0 else WHITE for g in range(24)], range(100, 124))
    _play_out(play, np.random.default_rng(size), (PHASE_OPPONENT, PHASE_LEARNER))
    nn = size * size
    for g in range(24):
        moves, values = play.record(g)
        assert len(moves) == len(values) and np.all(np.abs(values) <= 1)
        game = Game(size, 0.5)
        for move in moves:
            acceptable = _acceptable(game)
            if move == nn:
                assert not acceptable               # a pass only when nothing else is left
            else:
                assert int(move) in acceptable      # legal (superko too), not an own eye
            game.play(int(move))                    # raises on an illegal move
        assert game.is_over()
        score, ownership = play.result(g)
        bad, _, over, replay_score, replay_owner = check_game(size, 0.5, moves)
        assert bad < 0 and over and score == pytest.approx(replay_score)
        assert np.array_equal(ownership, replay_owner)


def test_the_learner_and_the_opponent_move_in_alternate_steps():
    play = PolicyPlay(games=4, size=5, komi=0.5)
    play.reset([BLACK, WHITE, BLACK, WHITE], range(4))
    buf = np.zeros((4, play.planes, 5, 5), dtype=np.uint8)
    assert play.collect(buf, PHASE_OPPONENT) == 2          # Black openings of the White learners
    play.apply(np.zeros((2, 26), np.float32), np.zeros(2, np.float32))
    assert [len(play.record(g)[0]) for g in range(4)] == [0, 1, 0, 1]
    assert play.collect(buf, PHASE_LEARNER) == 4           # from now on every game, every step
    play.apply(np.zeros((4, 26), np.float32), np.zeros(4, np.float32))
    assert [len(play.record(g)[0]) for g in range(4)] == [1, 2, 1, 2]
    with pytest.raises(ValueError):
        play.apply(np.zeros((3, 26), np.float32), np.zeros(3, np.float32))


def test_an_opponent_collect_puts_group_0_first():
    play = PolicyPlay(games=4, size=5, komi=0.5, floor=0.0, symmetries=False)
    for g, group in enumerate((1, 0, 1, 0)):
        play.start(g, WHITE, g, group)               # Black (the opponent) moves first
    buf = np.zeros((4, play.planes, 5, 5), dtype=np.uint8)
    assert play.collect(buf, PHASE_LEARNER) == 0
    assert play.collect(buf, PHASE_OPPONENT) == 4 and play.group_counts == (2, 2)
    logits = np.full((4, 26), -1e9, dtype=np.float32)
    for row in range(4):
        logits[row, 10 + row] = 0.0                  # row i can only play 10 + i
    play.apply(logits, np.zeros(4, np.float32))
    first = [int(play.record(g)[0][0]) for g in range(4)]
    assert first == [12, 10, 13, 11]                 # games 1, 3 (group 0), then 0, 2


def _floored(logits, candidates, floor):
    """The expected distribution, computed here: softmax over the candidates, floor, renormalise."""
    z = np.asarray(logits, dtype=np.float64)[candidates]
    p = np.exp(z - z.max())
    p /= p.sum()
    p = np.maximum(p, floor)
    out = np.zeros(len(logits))
    out[candidates] = p / p.sum()
    return out


def test_floor_gives_a_hopeless_move_its_share():
    game = Game(5, 0.5)
    logits = np.zeros(26, dtype=np.float32)
    logits[7] = -1e9
    logits[12] = 4.0
    floor = 0.01
    expected = _floored(logits, list(range(25)), floor)   # no pass: other moves are left
    assert np.allclose(distribution(game.board, logits, floor=floor), expected)
    draws = 200_000
    counts = np.bincount(sample_moves(game.board, logits, draws=draws, seed=3, floor=floor),
                         minlength=26)
    p = expected[7]
    sigma = np.sqrt(draws * p * (1 - p))
    assert abs(counts[7] - draws * p) < 5 * sigma
    assert counts[25] == 0
    assert np.abs(counts / draws - expected).max() < 0.01


def test_distribution_excludes_own_eyes_and_matches_the_formula_midgame():
    rng = np.random.default_rng(5)
    game = Game(5, 0.5)
    # Black builds an eye at the corner point 0 (a = 1, 5 black; its diagonal 6 black)
    for move in (1, 24, 5, 23, 6, 22):
        game.play(move)
    assert game.board.is_eye(0, BLACK)
    logits = rng.normal(size=26).astype(np.float32)
    logits[0] = 50.0                                        # the network loves its own eye
    candidates = _acceptable(game)
    assert 0 not in candidates
    expected = _floored(logits, candidates, 1e-3)
    got = distribution(game.board, logits, floor=1e-3)
    assert got[0] == 0 and np.allclose(got, expected)
    assert 0 not in set(sample_moves(game.board, logits, draws=5000, seed=1).tolist())
    with_pass = distribution(game.board, logits, floor=1e-3, allow_pass=True)
    assert np.allclose(with_pass, _floored(logits, candidates + [25], 1e-3))


def test_a_move_repeating_a_position_is_struck_and_drawn_again():
    game = Game(5, 0.5)
    for move in (1, 0, 5, 24):          # Black captures the White stone at 0
        game.play(move)
    assert game.board.captures == (1, 0)
    logits = np.zeros(26, dtype=np.float32)
    logits[12] = 30.0                   # nearly all of the mass on 12
    repeated = game.board.hash_after(12)
    draws = sample_moves(game.board, logits, draws=2000, seed=2, floor=1e-3,
                         history=list(game.hash_history) + [repeated])
    assert 12 not in set(draws.tolist()) and len(set(draws.tolist())) > 5
    plain = sample_moves(game.board, logits, draws=2000, seed=2, floor=1e-3,
                         history=list(game.hash_history))
    assert np.mean(plain == 12) > 0.9


def test_play_is_reproducible_for_a_seed():
    def run(seeds):
        play = PolicyPlay(games=6, size=5, komi=0.5, floor=0.01)
        play.reset([BLACK, WHITE] * 3, seeds)
        _play_out(play, np.random.default_rng(0), (PHASE_OPPONENT, PHASE_LEARNER))
        return [play.record(g)[0].tolist() for g in range(6)]

    assert run(range(6)) == run(range(6))
    assert run(range(6)) != run(range(10, 16))


# -- the pool --------------------------------------------------------------------------------

def _pool(path, entries, version=1):
    path.write_text(json.dumps({"version": version, "entries": entries}))
    return str(path)


def test_opponent_draws_follow_the_weights_and_the_seed(tmp_path):
    pool = read_pool(_pool(tmp_path / "pool.json", [
        {"name": "ckpt-0", "path": "checkpoints/ckpt-000000000.ckpt", "step": 0, "weight": 1.0},
        {"name": "ckpt-100", "path": "checkpoints/ckpt-000000100.ckpt", "step": 100, "weight": 3.0},
        {"name": "ckpt-200", "path": "checkpoints/ckpt-000000200.ckpt", "step": 200, "weight": 0.0},
    ]))
    names = [draw_opponent(pool, 11, 2, k).name for k in range(4000)]
    assert names == [draw_opponent(pool, 11, 2, k).name for k in range(4000)]
    assert names != [draw_opponent(pool, 12, 2, k).name for k in range(4000)]
    assert names != [draw_opponent(pool, 11, 3, k).name for k in range(4000)]
    share = names.count("ckpt-100") / len(names)
    assert abs(share - 0.75) < 5 * np.sqrt(0.75 * 0.25 / len(names))
    assert "ckpt-200" not in names
    assert read_pool(str(tmp_path / "missing.json")) is None


@pytest.mark.parametrize("entries, version, words", [
    ([{"name": "a", "path": "x.ckpt", "step": 0, "weight": 1}], 2, "version"),
    ([], 1, "entries"),
    ([{"name": "a", "path": "/abs.ckpt", "step": 0, "weight": 1}], 1, "relative"),
    ([{"name": "a", "path": "../x.ckpt", "step": 0, "weight": 1}], 1, "relative"),
    ([{"name": "a", "path": "x.ckpt", "step": -1, "weight": 1}], 1, "step"),
    ([{"name": "a", "path": "x.ckpt", "step": 0, "weight": -1}], 1, "weight"),
    ([{"name": "a", "path": "x.ckpt", "step": 0, "weight": 0}], 1, "every weight is 0"),
    ([{"name": "a b", "path": "x.ckpt", "step": 0, "weight": 1}], 1, "name"),
])
def test_a_bad_pool_file_is_named_in_one_line(tmp_path, entries, version, words):
    with pytest.raises(PoolError) as info:
        read_pool(_pool(tmp_path / "pool.json", entries, version))
    assert words in str(info.value) and "\n" not in str(info.value)
    (tmp_path / "junk.json").write_bytes(b"\xff{")
    with pytest.raises(PoolError, match="not JSON"):
        read_pool(str(tmp_path / "junk.json"))


def test_players_field_is_checked_when_present(tmp_path):
    moves = np.array([25, 25], dtype=np.int16)
    _, _, _, score, owner = check_game(5, 0.5, moves)

    def shard(players, name):
        record = GameRecord(size=5, komi=0.5, moves=moves, full=np.array([1, 0], np.uint8),
                            root_value=np.zeros(2, np.float32),
                            policy_count=np.ones(2, np.uint16), policy_moves=moves.copy(),
                            policy_visits=np.ones(2, np.float32), winner=-1, score=score,
                            end="passes", ownership=owner, versions=[3, 1], players=players)
        writer = ShardWriter(tmp_path, prefix="t", size=5, komi=0.5)
        writer.add(record)
        return writer.close(name)

    assert read_shard(shard({"learner": 1, "opponent": "ckpt-0"}, "a.shard")).games[0].players == \
        {"learner": 1, "opponent": "ckpt-0"}
    assert read_shard(shard(None, "b.shard")).games[0].players is None
    with pytest.raises(ShardError, match="players"):
        read_shard(shard({"learner": 2, "opponent": "ckpt-0"}, "c.shard"))
    with pytest.raises(ShardError, match="players"):
        read_shard(shard({"learner": 1, "opponent": "x" * 65}, "d.shard"))


# -- a real run --------------------------------------------------------------------------------

CONFIG = """
[model]
board_size = 5
blocks = 1
channels = 8
value_hidden = 16

[server]
endpoint = "tcp://127.0.0.1:*"
max_batch = 64
max_wait_us = 500
device = "cpu"
threads = 1
backend = "torch"
slots = ["current"]

[selfplay]
games = 8
komi = 0.5
shard_games = 8
shard_seconds = 30.0
seed = 7
policy_floor = 0.01

[trainer]
algorithm = "reinforce"
device = "cpu"
"""


def test_reinforce_selfplay_writes_shards_against_pool_opponents(tmp_path):
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import load_config
    from supervision.role_process import ServerProcess
    from wire.client import InferenceClient, ServerError

    config_path = tmp_path / "c.toml"
    config_path.write_text(CONFIG)
    config = load_config(str(config_path))
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    for step, seed in ((0, 1), (40, 2)):
        save_checkpoint(run / "checkpoints" / f"ckpt-{step:09d}.ckpt",
                        build_model(config.model, seed=seed), step=step)
    pool_path = _pool(run / "pool.json", [
        {"name": "ckpt-0", "path": "checkpoints/ckpt-000000000.ckpt", "step": 0, "weight": 1.0},
        {"name": "ckpt-40", "path": "checkpoints/ckpt-000000040.ckpt", "step": 40, "weight": 2.0}])
    pool = read_pool(pool_path)
    steps = {e.name: e.step for e in pool}
    games, batches = 8, 8
    with ServerProcess(str(config_path), endpoint="tcp://127.0.0.1:*",
                       log_path=str(tmp_path / "server.log")) as server:
        with InferenceClient(server.endpoint, timeout_s=20, retries=1) as admin:
            with pytest.raises(ServerError) as info:       # a refused load creates no slot
                admin.reload("opponent-bad", data=b"not a checkpoint")
            assert info.value.code == "reload_failed"
            with pytest.raises(ServerError) as info:
                admin.receive(admin.submit(np.zeros((1, 17, 5, 5), np.uint8), slot="opponent-bad"))
            assert info.value.code == "unknown_slot"
        proc = subprocess.run(
            [sys.executable, "-m", "fastgo_cli.main", "selfplay", "--config", str(config_path),
             "--run-dir", str(run), "--server", server.endpoint, "--max-games",
             str(games * batches), "--quiet"],
            capture_output=True, text=True, timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1"))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    shards = sorted(p for p in os.listdir(run / "shards") if p.endswith(".shard"))
    records = [g for name in shards for g in read_shard(str(run / "shards" / name)).games]
    assert len(records) == games * batches          # finished games; two mini-batches overlap
    nn = 25
    by_batch = {}
    for record in records:
        batch, g = divmod(record.seed - 7 * 1_000_003, games)
        by_batch.setdefault(batch, []).append((g, record))
        learner = record.players["learner"]
        assert learner == (1 if g % 2 == 0 else -1)
        colour = np.where(np.arange(len(record.moves)) % 2 == 0, 1, -1)
        assert np.array_equal(record.full, (colour == learner).astype(np.uint8))
        assert np.array_equal(record.policy_count, np.ones(len(record.moves)))
        assert np.array_equal(record.policy_moves, record.moves)
        assert np.all(record.policy_visits == 1.0)
        assert record.versions == [0, steps[record.players["opponent"]]]
        assert record.end in ("passes", "move_cap") and len(record.moves) <= 2 * nn
    complete = [k for k, members in by_batch.items() if len(members) == games]
    assert len(complete) >= batches - 2 and set(range(max(by_batch) - 1)) <= set(complete)
    for batch, members in by_batch.items():
        assert len({g for g, _ in members}) == len(members)   # game slot g plays game g
        expected = draw_opponent(pool, 7, 0, batch).name      # same seed, same opponents
        assert {r.players["opponent"] for _, r in members} == {expected}
    for batch in complete:
        assert sum(r.players["learner"] == 1 for _, r in by_batch[batch]) == games // 2
    assert len({r.players["opponent"] for r in records}) == 2
    log = (run / "logs" / "selfplay-w0.log").read_text()
    assert "mini-batch 0: opponent" in log


# -- the worker in process, with a stand-in for the server --------------------------------------

class _FakeServer:
    """The client interface the worker uses: uniform logits, a version per slot, reloads kept."""

    def __init__(self, versions):
        self.versions = dict(versions)
        self.model_version = None
        self.slots_asked = []
        self.reloads = []
        self.planes = {}            # slot -> every position submitted to it, as bytes
        self._replies = {}

    def submit(self, planes, slot=None):
        ticket = len(self.slots_asked)
        self.slots_asked.append(slot)
        self.planes.setdefault(slot, set()).update(bytes(p) for p in np.asarray(planes))
        self._replies[ticket] = (slot, len(planes))
        return ticket

    def receive(self, ticket):
        slot, count = self._replies.pop(ticket)
        self.model_version = self.versions[slot]
        return np.zeros((count, 26), np.float32), np.full(count, 0.25, np.float32)

    def reload(self, slot, path="", *, data=None):
        self.reloads.append((slot, data))
        self.versions[slot] = 9
        return 9


def _worker(tmp_path, algorithm, server, **extra):
    from rundata.config import loads_config
    from rundata.rundir import open_run_dir
    from selfplay_workers.policy_worker import PolicyWorker

    config = loads_config(f"""
[model]
board_size = 5
[selfplay]
games = 4
komi = 0.5
sgf_every = 2
[trainer]
algorithm = "{algorithm}"
""")
    run_dir = open_run_dir(tmp_path / "run")
    return PolicyWorker(config, server, run_dir=run_dir, seed=5, sgf_dir=run_dir.sgf, **extra), run_dir


def _games(run_dir):
    names = sorted(n for n in os.listdir(run_dir.shards) if n.endswith(".shard"))
    return [g for n in names for g in read_shard(os.path.join(run_dir.shards, n)).games]


def test_value_mode_plays_the_current_policy_against_itself(tmp_path):
    server = _FakeServer({"current": 3})
    worker, run_dir = _worker(tmp_path, "value", server)
    stats = worker.run(max_games=8)
    games = _games(run_dir)
    assert stats["games"] == len(games) >= 8 and set(server.slots_asked) == {"current"}
    for game in games:
        assert game.players == {"learner": 0, "opponent": "self"}
        assert game.versions == [3, 3] and np.all(game.full == 1)
        assert np.allclose(game.root_value, 0.25)
    assert len([n for n in os.listdir(run_dir.sgf) if n.endswith(".sgf")]) == len(games) // 2


def test_without_a_pool_the_opponent_is_the_current_network_the_run_starts_from(tmp_path):
    server = _FakeServer({"current": 3})
    worker, run_dir = _worker(tmp_path, "reinforce", server)
    (tmp_path / "run" / "pool.json").write_text("{not json")        # refused, logged, not fatal
    worker.run(max_games=4)
    assert set(server.slots_asked) == {"current"} and not server.reloads
    assert {g.players["opponent"] for g in _games(run_dir)} == {"initial"}
    assert all(g.versions == [3, 3] for g in _games(run_dir))

    # An untrained step-0 checkpoint in the run is not the start network of a pretrained run:
    # still the current slot, nothing loaded.
    (tmp_path / "run" / "pool.json").unlink()
    (tmp_path / "run" / "checkpoints" / "ckpt-000000000.ckpt").write_bytes(b"weights")
    server = _FakeServer({"current": 3})
    worker, run_dir = _worker(tmp_path, "reinforce", server)
    worker.run(max_games=4)
    assert set(server.slots_asked) == {"current"} and not server.reloads
    assert all(g.players["opponent"] == "initial" and g.versions == [3, 3] for g in _games(run_dir))


def test_reinforce_evaluates_the_positions_the_trainer_rebuilds(tmp_path):
    """The learner's positions go to the server under the identity symmetry, exactly as the
    trainer rebuilds them for the update (so its pi is the policy that chose the moves); the
    value stage keeps the 8 symmetries."""
    from trainer.reinforce import learner_batch
    from trainer.window import block_from_games

    server = _FakeServer({"current": 3})
    worker, run_dir = _worker(tmp_path, "reinforce", server)
    worker.run(max_games=8)
    games = _games(run_dir)
    batch = learner_batch(block_from_games(games, 5, "t"), 5, 0.5, "alphazero", 17)
    assert len(batch.action) > 20
    rebuilt = {bytes(np.ascontiguousarray(p)) for p in batch.planes}
    assert rebuilt <= server.planes["current"]
    value, _ = _worker(tmp_path / "v", "value", _FakeServer({"current": 3}))
    assert value.play.symmetries and not worker.play.symmetries
