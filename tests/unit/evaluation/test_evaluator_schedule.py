"""The evaluator's schedule (evaluation.schedule, as evaluation.evaluator uses it): a first rating
of the newest checkpoint once a point is due, refining batches between points only where the CPU
budget leaves room for the
next point on time, and a refinement superseded by a newer point keeping the games it played."""
import json
import logging
import shutil

from evaluation.budget import CpuBudget
from evaluation.evaluator import Evaluator
from rundata.config import load_config, loads_config
from rundata.rundir import open_run_dir
from trainer.factory import make_trainer


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def scheduled(tmp_path, cpu, clock, share=0.2, interval=200.0):
    budget = CpuBudget(share, cpu_clock=lambda: cpu[0], wall_clock=clock)
    return Evaluator(loads_config(f"[evaluator]\ninterval_s = {interval}\n"),
                     open_run_dir(tmp_path / "run"), logging.getLogger("test"), budget=budget,
                     clock=clock)


def test_a_point_is_due_an_interval_after_the_last_less_what_a_point_takes(tmp_path):
    clock, cpu = Clock(), [0.0]
    evaluator = scheduled(tmp_path, cpu, clock)
    assert evaluator.schedule.point_due()                        # no point yet
    evaluator.schedule.last_point_at, evaluator.schedule.cost["point_wall_s"] = 100.0, 30.0
    clock.now = 269.0
    assert not evaluator.schedule.point_due()                    # 169 s on: due at 270 (300 - 30)
    clock.now = 270.0
    assert evaluator.schedule.point_due()
    # a point slower than the interval still leaves half of it to refining
    evaluator.schedule.cost["point_wall_s"] = 500.0
    clock.now = 199.0
    assert not evaluator.schedule.point_due()
    clock.now = 200.0
    assert evaluator.schedule.point_due()


def test_refining_only_where_the_budget_is_clear_by_the_next_point(tmp_path):
    clock, cpu = Clock(), [0.0]
    evaluator = scheduled(tmp_path, cpu, clock)
    evaluator.refinement = iter(())
    evaluator.schedule.last_point_at, evaluator.schedule.cost["point_wall_s"] = 0.0, 20.0
    # 5 s a game: a batch of int(0.2 * 200 / 2 / 5) = 4 games, 20 s, against a checkpoint (an
    # opponent not played yet gets a probe of 2 games at the dearest cost played: 10 s)
    evaluator.schedule.game_cost["checkpoint"] = 5.0
    assert evaluator.schedule.next_batch_cpu_s("ckpt-9", 0) == 20.0
    assert evaluator.schedule.next_batch_cpu_s("gnugo:5", 0) == 10.0
    # next point due at 180 s: 0.2 core * 180 s = 36 s of CPU allowed by then
    cpu[0], clock.now = 15.0, 60.0
    assert evaluator.schedule.may_refine("ckpt-9")               # 15 + 20 <= 36
    cpu[0] = 17.0
    assert not evaluator.schedule.may_refine("ckpt-9")           # 17 + 20 > 36: the point waits
    clock.now = 175.0                                   # later the same holds: 35 + 20 > 36
    cpu[0] = 35.0
    assert not evaluator.schedule.may_refine("ckpt-9")
    # without an interval (each checkpoint in full) refining is never held back
    unscheduled = scheduled(tmp_path, cpu, clock, interval=0.0)
    unscheduled.schedule.last_point_at, unscheduled.schedule.game_cost["checkpoint"] = 0.0, 1e9
    assert unscheduled.schedule.may_refine()


def test_a_refining_batch_must_end_before_the_next_point_is_due(tmp_path):
    clock, cpu = Clock(), [0.0]
    evaluator = scheduled(tmp_path, cpu, clock)
    schedule = evaluator.schedule
    schedule.last_point_at, schedule.cost["point_wall_s"] = 0.0, 20.0   # next point due at 180 s
    schedule.batch_played("ckpt-7", 4, cpu_s=20.0, wall_s=60.0)        # 5 s CPU, 15 s wall a game
    # a batch: int(0.2 * 200 / 2 / 5) = 4 games, 20 s of CPU, 60 s of wall time
    assert schedule.next_batch_cpu_s("ckpt-9") == 20.0 and schedule.next_batch_wall_s("ckpt-9") == 60.0
    cpu[0], clock.now = 0.0, 119.0
    assert schedule.may_refine("ckpt-9")                # ends at 179 s, the budget clear
    clock.now = 121.0
    assert not schedule.may_refine("ckpt-9")            # would end at 181 s: the point waits
    # learnt as a running estimate: the last batch weighs a half
    schedule.batch_played("ckpt-8", 2, cpu_s=10.0, wall_s=10.0)
    assert schedule.next_batch_wall_s("ckpt-9") == 4 * (15.0 + 5.0) / 2
    assert schedule.may_refine("ckpt-9")                # 40 s now: ends at 161 s


def test_a_dear_opponent_is_played_in_smaller_batches(tmp_path):
    clock, cpu = Clock(), [0.0]
    evaluator = scheduled(tmp_path, cpu, clock)          # 0.2 core, a point every 200 s
    assert evaluator.schedule.batch_games("gnugo:10", 0) == 8    # nothing known yet: the rule's batch
    # half of what 200 s earn at 0.2 core: 20 s of CPU a batch
    evaluator.schedule.game_cost.update({"gnugo:10": 8.0, "gnugo:1": 1.0, "checkpoint": 4.0})
    assert evaluator.schedule.batch_games("gnugo:10", 0) == 2    # 20 / 8 -> 2
    assert evaluator.schedule.batch_games("gnugo:1", 0) == 8     # 20 / 1 -> the rule's 8
    assert evaluator.schedule.batch_games("ckpt-5", 0) == 5      # any checkpoint: 20 / 4
    assert evaluator.schedule.batch_games("ckpt-5", 30) == 2     # the rule's last 2 of 32
    # the refinement's next batch, for may_refine: a game against its kind, else (not played
    # yet) against the dearest kind, times its batch
    assert evaluator.schedule.next_batch_cpu_s("gnugo:10", 0) == 16.0
    assert evaluator.schedule.next_batch_cpu_s(None) == 16.0
    evaluator.schedule.game_cost["gnugo:10"] = 40.0               # dearer than the slice: still 2 games
    assert evaluator.schedule.batch_games("gnugo:10", 0) == 2


def test_an_opponent_not_played_yet_gets_a_probe_of_two_games(tmp_path):
    # level 5 is known and cheap (1 s a game: a whole batch of 8 fits the 20 s slice); level 10
    # is not played yet: 2 games learn its cost before a batch is sized by it
    clock, cpu = Clock(), [0.0]
    evaluator = scheduled(tmp_path, cpu, clock)
    schedule = evaluator.schedule
    schedule.game_cost.update({"gnugo:5": 1.0})
    schedule.game_wall.update({"gnugo:5": 5.0})
    assert schedule.batch_games("gnugo:5", 0) == 8
    assert schedule.batch_games("gnugo:10", 0) == 2
    assert schedule.next_batch_wall_s("gnugo:10", 0) == 10.0       # 2 games at the dearest wall
    schedule.batch_played("gnugo:10", 2, cpu_s=4.0, wall_s=30.0)   # now it is known: 2 s a game
    assert schedule.batch_games("gnugo:10", 0) == 8
    assert schedule.next_batch_wall_s("gnugo:10", 0) == 8 * 15.0


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_newer_point_supersedes_a_refinement_and_its_games_are_kept(tmp_path,
                                                                      write_tiny_config):
    extra = ("[evaluator]\nvisits = 4\nbatch_games = 2\nmax_games = 8\n"
             "elo_width = 1.0\nanchors = [\"random\", \"mcts:8\"]\ninterval_s = 200\n"
             "cpu_share = 1000.0\n")
    config_path = write_tiny_config(tmp_path / "c.toml", checkpoint_every=5, extra=extra)
    config = load_config(config_path)
    run = open_run_dir(tmp_path / "run")
    trainer = make_trainer(config, run)
    trainer.save_checkpoint()                            # ckpt-0
    clock = Clock()
    evaluator = Evaluator(config, run, logging.getLogger("test"), clock=clock)
    assert evaluator.work()                              # ckpt-0's first rating
    table = tmp_path / "run" / "ratings.jsonl"
    first = rows(table)
    # 2 games can't be one-sided (Wilson) nor 1 Elo wide: the first rating's own stop
    assert [(r["a"], r["b"], r["games"], r["stop"]) for r in first] == \
        [("ckpt-0", "random", 2, "first rating")]
    evaluations = rows(tmp_path / "run" / "evaluations.jsonl")
    assert [(e["player"], e["opponents"]) for e in evaluations] == [("ckpt-0", ["random"])]
    assert evaluator.refinement is not None
    # the refinement names its next batch's opponent before playing it, for may_refine
    announced = evaluator.job.next_label
    assert announced in ("random", "mcts:8")
    assert sum(total.games for total in evaluator.job.totals.values()) == 2
    assert evaluator.work()                              # nothing newer: one batch refining
    assert sum(total.games for total in evaluator.job.totals.values()) == 4
    assert evaluator.job.totals[announced].games == (4 if announced == "random" else 2)
    assert len(rows(table)) == 1                         # the pairing goes on: not yet recorded
    shutil.copyfile(run.checkpoint(0), run.checkpoint(5))   # a newer checkpoint, not yet due
    assert evaluator.pending() is not None and not evaluator.schedule.point_due()
    played = sum(total.games for total in evaluator.job.totals.values())
    clock.now = 200.0                                    # due: the refinement is superseded
    assert evaluator.work()
    after = rows(table)
    ckpt0 = [r for r in after if r["a"] == "ckpt-0"]
    assert sum(r["games"] for r in ckpt0) == played      # every game it played is recorded
    assert ckpt0[-1]["stop"] == "superseded" and ckpt0[-1]["games"] == 2
    ckpt5 = [r for r in after if r["a"] == "ckpt-5"]
    # its first rating: the anchor nearest to even by ckpt-0's rating (which split with random)
    assert [(r["b"], r["games"], r["stop"]) for r in ckpt5] == [("random", 2, "first rating")]
    assert evaluator.job.name == "ckpt-5" and evaluator.schedule.last_point_at == 200.0
    assert json.loads((tmp_path / "run" / "ratings.json").read_text())["latest"]["player"] \
        == "ckpt-5"
    # a restart (here the final rating, --once) takes the newest point's refinement up again
    # from the table and plays it to its end
    evaluator.stop_refining()
    again = Evaluator(config, run, logging.getLogger("test"), enforce_budget=False)
    while again.work(once=True):
        pass
    ckpt5 = [r for r in rows(table) if r["a"] == "ckpt-5"]
    totals = {}
    for r in ckpt5:
        totals[r["b"]] = totals.get(r["b"], 0) + r["games"]
    assert totals["ckpt-0"] > 2 and all(games <= 8 for games in totals.values())
    last = {r["b"]: r["stop"] for r in ckpt5}
    assert set(last.values()) <= {"one-sided", "interval", "max games"}, last
    assert len(rows(tmp_path / "run" / "evaluations.jsonl")) == 2
