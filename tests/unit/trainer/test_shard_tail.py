"""What a run keeps as it grows: the shards on disk a bounded tail (trainer.shards_kept_mb), only
shards taken in and no longer held deleted, oldest first; the trainer's state naming only the
shards still there; the replay window at most trainer.window_max positions."""
from __future__ import annotations

import os

import numpy as np

from network.checkpoint import load_checkpoint
from rundata.config import loads_config
from rundata.rundir import open_run_dir
from rundata.shards import list_shards
from trainer.factory import make_trainer
from trainer.intake import ShardIntake
from trainer.window import ReplayWindow, power_window

SIZE, KOMI = 5, 0.5


def _shards(run, count, game_record, random_moves, write_shard, seed=0, start=0):
    """`count` shards of 4 random games each, named in time order; their names."""
    rng = np.random.default_rng(seed)
    names = []
    for k in range(start, start + count):
        games = [game_record(SIZE, KOMI, random_moves(SIZE, KOMI, rng, length=10), 0,
                             seed=1000 * k + g) for g in range(4)]
        name = f"{k:015d}-w0-test-{k:05d}.shard"
        write_shard(run.shards, games, name, size=SIZE, komi=KOMI)
        names.append(name)
    return names


def test_prune_deletes_the_oldest_taken_in_and_not_held(tmp_path, game_record, random_moves,
                                                        write_shard):
    run = open_run_dir(tmp_path / "run")
    names = _shards(run, 10, game_record, random_moves, write_shard)
    sizes = {n: os.path.getsize(os.path.join(run.shards, n)) for n in names}
    kept = sum(sizes[n] for n in names[-4:])
    intake = ShardIntake(run, SIZE, KOMI, kept_bytes=kept)
    used = set(names[:8])                  # the two newest not taken in yet
    held = {names[1], names[6]}            # still in the window
    deleted = intake.prune(used, held)
    # expected: walk oldest first, skipping held and unused ones, until the rest fit
    total, expected = sum(sizes.values()), []
    for n in names:
        if total <= kept:
            break
        if n in used and n not in held:
            expected.append(n)
            total -= sizes[n]
    assert deleted == expected and deleted[0] == names[0] and names[1] not in deleted
    assert list_shards(run.shards) == [n for n in names if n not in deleted]
    assert sum(sizes[n] for n in list_shards(run.shards)) <= kept
    # nothing more to do; and 0 keeps every shard
    assert intake.prune(used - set(deleted), held) == []
    assert ShardIntake(run, SIZE, KOMI, kept_bytes=0).prune(set(names), set()) == []


def test_prune_never_deletes_what_is_not_taken_in_even_over_the_bound(tmp_path, game_record,
                                                                       random_moves, write_shard):
    run = open_run_dir(tmp_path / "run")
    names = _shards(run, 5, game_record, random_moves, write_shard)
    intake = ShardIntake(run, SIZE, KOMI, kept_bytes=1)
    assert intake.prune(set(), set()) == []
    assert intake.prune(set(names), set(names)) == []
    assert list_shards(run.shards) == names


def test_a_trainer_keeps_a_bounded_tail_and_resumes_from_it(tmp_path, small_trainer_config,
                                                            game_record, random_moves,
                                                            write_shard):
    # a fixed window of about three shards' positions; the tail bound is set in bytes below
    text = small_trainer_config() + 'window = "fixed"\nwindow_size = 100\n'
    config = loads_config(text)
    run = open_run_dir(tmp_path / "run")
    trainer = make_trainer(config, run)
    one = _shards(run, 1, game_record, random_moves, write_shard, seed=99, start=0)
    shard_bytes = os.path.getsize(os.path.join(run.shards, one[0]))
    trainer.intake.kept_bytes = 5 * shard_bytes
    on_disk_counts = []
    for k in range(1, 40):                 # shards arrive one at a time
        _shards(run, 1, game_record, random_moves, write_shard, seed=k, start=k)
        trainer.ingest()
        on_disk = list_shards(run.shards)
        on_disk_counts.append(len(on_disk))
        held = {b.name for b in trainer.window.blocks}
        # the window's shards are never deleted, and the tail is bounded by the larger of the
        # bound and the window (shards of about the same size: a little slack for that)
        assert held <= set(on_disk)
        assert len(on_disk) <= max(6, len(held) + 1)
        assert trainer.used_shards == set(on_disk)
    assert max(on_disk_counts[10:]) == max(on_disk_counts[-10:])      # flat, not growing
    positions = trainer.window.positions
    trainer.save_checkpoint()
    state = load_checkpoint(run.latest).extra["trainer"]
    assert sorted(state["used_shards"]) == list_shards(run.shards)
    resumed = make_trainer(config, run)
    assert resumed.used_shards == set(list_shards(run.shards))
    assert resumed.window.positions == positions
    assert [b.name for b in resumed.window.blocks] == [b.name for b in trainer.window.blocks]


def test_the_window_stops_growing_at_window_max():
    window = ReplayWindow(SIZE, KOMI, "alphazero", window="power", window_size=20_000,
                          window_max=4_000_000)
    for total, grown in ((10_000, 10_000), (1_000_000, power_window(1_000_000, 20_000, 0.75, 0.4)),
                         (10 ** 9, 4_000_000), (10 ** 12, 4_000_000)):
        window.total_positions = total
        assert window.target_size() == grown
    assert power_window(10 ** 9, 20_000, 0.75, 0.4) > 4_000_000     # it would have grown on
    unbounded = ReplayWindow(SIZE, KOMI, "alphazero", window="power", window_size=20_000)
    unbounded.total_positions = 10 ** 9
    assert unbounded.target_size() == power_window(10 ** 9, 20_000, 0.75, 0.4)
    fixed = ReplayWindow(SIZE, KOMI, "alphazero", window="fixed", window_size=500, window_max=300)
    assert fixed.target_size() == 300
