"""Fault and integration tests of the learning loop with real processes: kill -9 of a worker and
of the trainer, hot reload under self-play load; and the replay kernel against a Python
reference."""
import os
import random
import re
import signal
import threading

import numpy as np
import pytest
import torch

from fastgo.board import BLACK, WHITE
from fastgo.game import Game
from fastgo.mcts import BatchedSearch
from fastgo.replay import check_game, encode_samples
from fastgo.symmetry import transform_planes, transform_policy
from network.batch_evaluator import UniformEvaluator
from network.checkpoint import load_checkpoint, save_checkpoint
from network.model import build_model
from rundata.config import load_config, loads_config
from rundata.rundir import open_run_dir
from rundata.shards import list_shards, read_shard
from selfplay_workers.worker import SelfplayWorker
from trainer.window import ReplayWindow, block_from_shard
from wire.client import InferenceClient

# ----------------------------------------------------------------------------------------------
# kill -9 a worker

KILLS = 12


def test_kill9_worker_never_leaves_a_partial_shard(tmp_path, write_tiny_config, start_server, fastgo,
                                                   wait_for):
    """Each of KILLS workers is killed a random 0..0.6 s after it logged its first shard: the
    kill lands at any point of a shard's writing (a shard closes every 0.3 s), on a loaded
    machine as on a quiet one."""
    config_path = write_tiny_config(tmp_path / "c.toml", games=8, visits=8, shard_games=2,
                                    shard_seconds=0.3)
    run = open_run_dir(tmp_path / "run")
    rng = random.Random(1234)
    kills = 0

    def closed():
        try:
            with open(run.log("selfplay-w0")) as handle:
                return handle.read().count("shard closed: ")
        except FileNotFoundError:
            return 0

    with start_server(config_path, tmp_path / "serve.log") as server:
        for _ in range(KILLS):
            before = closed()
            worker = fastgo("selfplay", "--config", config_path, "--run-dir", run.root,
                            "--server", server.endpoint, "--quiet")
            wait_for(lambda: closed() > before or worker.poll() is not None, 120,
                     what="the worker's first shard")
            try:
                worker.wait(rng.uniform(0.0, 0.6))
            except Exception:
                pass
            assert worker.poll() is None, worker.stdout.read().decode()[-2000:]
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(10)
            worker.stdout.close()
            kills += 1
            for name in list_shards(run.shards):      # every visible shard decodes fully
                read_shard(os.path.join(run.shards, name))
    logged = dict(re.findall(r"shard closed: (\S+) games=(\d+)", open(run.log("selfplay-w0")).read()))
    visible = {name: len(read_shard(os.path.join(run.shards, name)).games)
               for name in list_shards(run.shards)}
    assert len(logged) >= 10, "the worker closed too few shards to test anything"
    for name, games in logged.items():       # games counted on close == games read
        assert visible[name] == int(games)
    assert len(set(visible) - set(logged)) <= kills    # renamed, then killed before the log line
    temporaries = [n for n in os.listdir(run.shards) if n.startswith(".")]
    assert len(temporaries) <= 1             # each start removes what a killed worker left


# ----------------------------------------------------------------------------------------------
# kill -9 the trainer

def test_kill9_trainer_resumes_at_its_checkpoint_with_optimizer_state(tmp_path, write_tiny_config, fastgo,
                                                                    wait_for):
    config_path = write_tiny_config(tmp_path / "c.toml", checkpoint_every=5)
    text = open(config_path).read().replace("samples_per_position = 4.0", "samples_per_position = 1e6")
    text = text.replace("min_positions = 1000", "min_positions = 100")
    open(config_path, "w").write(text)
    config = load_config(config_path)
    run = open_run_dir(tmp_path / "run")
    SelfplayWorker(config, UniformEvaluator(5), shard_dir=run.shards, games=16, seed=3).run(max_games=40)
    rng = random.Random(99)
    for _ in range(3):
        trainer = fastgo("train", "--config", config_path, "--run-dir", run.root, "--no-publish",
                         "--quiet")
        try:
            first = load_checkpoint(run.latest).step if os.path.exists(run.latest) else 0
            wait_for(lambda: os.path.exists(run.latest) and load_checkpoint(run.latest).step >= first + 10,
                     60, 0.1, "two new checkpoints")
            try:
                trainer.wait(rng.uniform(0.0, 1.0))
            except Exception:
                pass
            os.kill(trainer.pid, signal.SIGKILL)
            trainer.wait(10)
        finally:
            trainer.stdout.close()
        # Every checkpoint a reader can see is complete (its hash verifies).
        for name in os.listdir(run.checkpoints):
            if name.endswith(".ckpt") and not name.startswith("."):
                load_checkpoint(os.path.join(run.checkpoints, name))
    saved = load_checkpoint(run.latest)
    from trainer.factory import make_trainer as Trainer
    resumed = Trainer(config, run)
    assert resumed.step == saved.step > 0
    assert resumed.samples == saved.extra["trainer"]["samples"] > 0
    assert resumed.used_shards == set(list_shards(run.shards))
    state = resumed.optimizer.state_dict()["state"]
    stored = saved.extra["optimizer"]["state"]
    assert state and set(state) == set(stored)
    for key in stored:
        assert torch.equal(state[key]["momentum_buffer"], stored[key]["momentum_buffer"])
    for name, tensor in saved.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name].cpu(), tensor)


# ----------------------------------------------------------------------------------------------
# hot reload under self-play load

def test_hot_reload_under_selfplay_load_loses_no_request(tmp_path, write_tiny_config, start_server,
                                                         wait_for):
    config_path = write_tiny_config(tmp_path / "c.toml", games=16, visits=8)
    config = load_config(config_path)
    with start_server(config_path, tmp_path / "serve.log") as server:
        client = InferenceClient(server.endpoint, timeout_s=20.0, retries=2)
        worker = SelfplayWorker(config, client, shard_dir=tmp_path, seed=5)
        published = []

        def publish():
            admin = InferenceClient(server.endpoint, timeout_s=30.0, retries=1)
            try:
                for step in range(1, 6):
                    # wait until games have been played under the current version
                    wait_for(lambda: worker.games_done >= 8 * step, 60, 0.01, "games")
                    path = tmp_path / f"p{step}.ckpt"
                    save_checkpoint(path, build_model(config.model, seed=step), step=step)
                    published.append(admin.reload("current", str(path), data=path.read_bytes()))
                wait_for(lambda: worker.games_done >= 8 * 6 + 16, 60, 0.01, "games after the last reload")
            finally:
                admin.close()
                worker.stop_requested = True

        thread = threading.Thread(target=publish)
        thread.start()
        try:
            stats = worker.run(seconds=120)
        finally:
            worker.stop_requested = True
            thread.join(60)
        server_stats = client.stats()
        client.close()
    assert published == [1, 2, 3, 4, 5]
    games = [g for name in list_shards(tmp_path) for g in read_shard(tmp_path / name).games]
    versions = [g.versions for g in games]
    assert all(v == sorted(v) for v in versions)          # a game only ever sees newer versions
    assert {v for vs in versions for v in vs} >= {0, 5}
    assert client.reconnects == 0
    assert server_stats["positions"] == stats["evals"] + stats["evals_discarded"]
    assert not server_stats.get("errors")


# ----------------------------------------------------------------------------------------------
# the replay kernel against a Python reference

def python_ownership(board):
    """Tromp-Taylor ownership by flood fill over Board.stones(), Black's view."""
    n = board.size
    stones = np.asarray(board.stones()).reshape(-1)
    out = np.zeros(n * n, np.int8)
    seen = set()
    for p in range(n * n):
        if stones[p] == BLACK:
            out[p] = 1
        elif stones[p] == WHITE:
            out[p] = -1
        elif p not in seen:
            region, reach, todo = [], set(), [p]
            seen.add(p)
            while todo:
                q = todo.pop()
                region.append(q)
                r, c = divmod(q, n)
                for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        m = rr * n + cc
                        if stones[m] == 0 and m not in seen:
                            seen.add(m)
                            todo.append(m)
                        elif stones[m]:
                            reach.add(int(stones[m]))
            owner = 1 if reach == {BLACK} else (-1 if reach == {WHITE} else 0)
            out[region] = owner
    return out


def random_game(size, rng):
    game = Game(size, 0.5)
    while not game.is_over():
        legal = np.flatnonzero(game.legal_moves())
        game.play(int(rng.choice(legal)))
    return game


@pytest.mark.parametrize("encoding", ["alphazero", "liberty"])
def test_encode_samples_matches_python_replay(encoding):
    rng = np.random.default_rng(4)
    size, nn = 5, 25
    games = [random_game(size, rng) for _ in range(6)]
    moves = [np.array([m for _, m in g.moves], np.int16) for g in games]
    game_start = np.concatenate([[0], np.cumsum([len(m) for m in moves])]).astype(np.int64)
    positions = int(game_start[-1])
    ownership = np.stack([python_ownership(g.board) for g in games])
    winner = np.array([1 if g.winner == BLACK else (-1 if g.winner == WHITE else 0) for g in games], np.int8)
    # sparse "visit counts": three random points per position, every other position full
    policy_moves = rng.integers(0, nn + 1, size=3 * positions).astype(np.int16)
    policy_visits = rng.integers(1, 50, size=3 * positions).astype(np.float32)
    policy_start = np.arange(0, 3 * positions + 1, 3, dtype=np.int64)
    full = (np.arange(positions) % 2).astype(np.uint8)
    count = 64
    sample_game = rng.integers(0, len(games), count).astype(np.int32)
    sample_move = np.array([rng.integers(0, len(moves[g])) for g in sample_game], np.int32)
    sample_sym = rng.integers(0, 8, count).astype(np.uint8)
    planes = 17 if encoding == "alphazero" else 11
    out_planes = np.empty((count, planes, size, size), np.uint8)
    out_policy = np.empty((count, nn + 1), np.float32)
    out_weight = np.empty(count, np.float32)
    out_value = np.empty(count, np.float32)
    out_own = np.empty((count, nn), np.float32)
    encode_samples(size, 0.5, encoding, np.concatenate(moves), game_start, winner, ownership,
                   policy_start, policy_moves, policy_visits, full, sample_game, sample_move,
                   sample_sym, out_planes, out_policy, out_weight, out_value, out_own)
    for i in range(count):
        g, m, s = int(sample_game[i]), int(sample_move[i]), int(sample_sym[i])
        replay = Game.replay([int(x) for x in moves[g][:m]], size=size, komi=0.5)
        expected = transform_planes(replay.board.features(encoding), s)
        assert np.array_equal(out_planes[i], expected), (i, g, m, s)
        p = game_start[g] + m
        dense = np.zeros(nn + 1, np.float32)
        np.add.at(dense, policy_moves[policy_start[p]:policy_start[p + 1]],
                  policy_visits[policy_start[p]:policy_start[p + 1]])
        if full[p]:
            assert out_weight[i] == 1.0
            np.testing.assert_allclose(out_policy[i], transform_policy(dense / dense.sum(), size, s),
                                       rtol=1e-6)
        else:
            assert out_weight[i] == 0.0 and not out_policy[i].any()
        sign = 1 if replay.to_move == BLACK else -1
        assert out_value[i] == sign * winner[g]
        own = transform_policy(np.append(ownership[g].astype(np.float32), 0), size, s)[:nn]
        np.testing.assert_array_equal(out_own[i], sign * own)


def test_check_game_agrees_with_game_rules():
    rng = np.random.default_rng(8)
    for _ in range(20):
        game = random_game(5, rng)
        moves = np.array([m for _, m in game.moves], np.int16)
        bad, reason, over, score, ownership = check_game(5, 0.5, moves)
        assert bad == -1 and over and score == game.score()
        np.testing.assert_array_equal(ownership, python_ownership(game.board))
        # a move after the end, an occupied point, a superko repetition
        assert check_game(5, 0.5, np.append(moves, 0).astype(np.int16))[0] == len(moves)
    assert check_game(5, 0.5, np.array([0, 25, 0], np.int16))[:2] == (2, "illegal (occupied, suicide or ko)")
    assert check_game(5, 0.5, np.array([26], np.int16))[1] == "off board"
    # positional superko: on 3x3 boards random games soon reach moves the board allows but
    # that recreate an earlier position; check_game must name each of them
    found = 0
    for _ in range(200):
        game = Game(3, 0.5)
        while not game.is_over() and found < 20:
            board_legal = np.flatnonzero(game.board.legal_moves()[:-1])
            refused = [m for m in board_legal if not game.is_legal(int(m))]
            for move in refused:
                moves = np.array([m for _, m in game.moves] + [move], np.int16)
                assert check_game(3, 0.5, moves)[:2] == (len(moves) - 1, "superko")
                found += 1
            points = np.flatnonzero(game.legal_moves()[:-1])
            game.play(int(rng.choice(points)) if len(points) and rng.random() < 0.95 else 9)
    assert found >= 20


def test_apply_refuses_a_reply_of_another_row_count():
    search = BatchedSearch(games=4, size=5, seed=1)
    search.start(4)
    buf = np.zeros((4, 17, 5, 5), np.uint8)
    count = search.collect(buf)
    assert count == 4
    with pytest.raises(ValueError, match="expected"):
        search.apply(np.zeros((count + 1, 26), np.float32), np.zeros(count + 1, np.float32))
    with pytest.raises(ValueError, match="expected"):
        search.apply(np.zeros((count, 26), np.float32), np.zeros(count + 1, np.float32))
    assert search.in_flight == 1                        # refused replies leave the batch in flight
    search.apply(np.zeros((count, 26), np.float32), np.zeros(count, np.float32))
    assert search.in_flight == 0


def test_window_drops_oldest_shards_and_samples_every_block(tmp_path):
    config = loads_config("[model]\nboard_size = 5\n[selfplay]\ngames = 8\nvisits = 4\nkomi = 0.5\n"
                          "shard_games = 4\n")
    SelfplayWorker(config, UniformEvaluator(5), shard_dir=tmp_path, seed=2).run(max_games=24)
    blocks = [block_from_shard(read_shard(tmp_path / n), n) for n in list_shards(tmp_path)]
    window = ReplayWindow(5, 0.5, "alphazero", window="fixed",
                          window_size=sum(b.positions for b in blocks[-2:]))
    for block in blocks:
        window.add(block)
    assert [b.name for b in window.blocks] == [b.name for b in blocks[-2:]]
    assert window.total_positions == sum(b.positions for b in blocks)
    out = window.sample(np.random.default_rng(0), window.batch_buffers(256, 17))
    assert set(np.unique(out["value"])) <= {-1.0, 0.0, 1.0}
    assert np.allclose(out["policy"][out["policy_weight"] > 0].sum(1), 1.0)
    # Which block each sampled row can come from, by its planes against every position of every
    # block (the dropped ones too) under the 8 symmetries, replayed here with fastgo.game.
    keys = [_position_keys(block, 5, 0.5) for block in blocks]
    kept = {len(blocks) - 2, len(blocks) - 1}
    owners = [{k for k, held in enumerate(keys) if row.tobytes() in held} for row in out["planes"]]
    assert all(owner & kept for owner in owners), "a sampled row is no position of the window"
    for k in sorted(kept):
        only_k = sum(1 for owner in owners if owner & kept == {k})
        assert only_k > 0, f"block {blocks[k].name} of the window was never sampled"


def _position_keys(block, size, komi):
    """The AlphaZero planes (as bytes) of every position of every game of `block`, under each
    of the 8 symmetries."""
    keys, start = set(), 0
    for length in block.game_len.tolist():
        game = Game(size, komi)
        for move in block.moves[start:start + length].tolist():
            planes = game.board.features("alphazero")
            keys.update(transform_planes(planes, s).tobytes() for s in range(8))
            game.play(move)
        start += length
    return keys
