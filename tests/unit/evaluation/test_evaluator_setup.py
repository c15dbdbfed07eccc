"""The evaluator role's set-up, without playing (evaluation.evaluator): which anchors it can use,
the CPU figures it carries over from evaluations.jsonl, and which checkpoint is pending."""
import json
import logging

from evaluation.evaluator import Evaluator
from rundata.config import loads_config
from rundata.rundir import open_run_dir


def make(tmp_path, text, rows=(), log=None):
    run_dir = open_run_dir(tmp_path / "run")
    if rows:
        (tmp_path / "run" / "evaluations.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows))
    return Evaluator(loads_config(text), run_dir, log or logging.getLogger("test"))


def test_anchors_it_cannot_play_are_skipped_with_a_line(tmp_path, monkeypatch, caplog):
    from fastgo import player_spec

    monkeypatch.setattr(player_spec, "GNUGO_PROGRAM", "no-such-gnugo-program")
    with caplog.at_level(logging.INFO):
        evaluator = make(tmp_path, '[evaluator]\nanchors = ["random", "gnugo:1", "MCTS:50", '
                                   '"gtp:engine --x", "missing.ckpt"]\n')
    assert list(evaluator.anchors) == ["random", "mcts:50", "gtp:engine --x"]
    assert "anchor gnugo:1 skipped: GNU Go is not installed" in caplog.text
    assert "(add it: apt-get install gnugo)" in caplog.text
    assert "anchor missing.ckpt skipped: no such checkpoint file" in caplog.text


class Beats:
    """A status file that keeps what the role would write."""

    def __init__(self):
        self.fields = None

    def beat(self, fields_fn, force=False):
        self.fields = fields_fn()


def test_the_status_file_lists_the_skipped_anchors_and_the_command_that_adds_each(
        tmp_path, monkeypatch):
    from fastgo import player_spec

    monkeypatch.setattr(player_spec, "GNUGO_PROGRAM", "no-such-gnugo-program")
    monkeypatch.setenv("FASTGO_KATAGO_HOME", str(tmp_path / "no-katago"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("FASTGO_KATAGO", raising=False)
    status = Beats()
    run_dir = open_run_dir(tmp_path / "run")
    evaluator = Evaluator(loads_config('[evaluator]\nanchors = ["random", "gnugo:1", "gnugo:10", '
                                       '"katago:1,t=4", "gone.ckpt"]\n'), run_dir,
                          logging.getLogger("test"), status)
    evaluator.beat(force=True)
    groups = status.fields["skipped_anchors"]
    assert [(g["what"], g["anchors"], g["command"]) for g in groups] == [
        ("GNU Go", ["gnugo:1", "gnugo:10"], "apt-get install gnugo"),
        ("KataGo", ["katago:1,t=4"], "fastgo katago fetch"),
        ("checkpoint", ["gone.ckpt"], "")]
    assert groups[0]["why"].startswith("GNU Go is not installed")
    assert status.fields["cpu_budget"] == evaluator.budget.share       # the budget's figures too


def test_a_reference_player_of_another_board_size_is_skipped(tmp_path, monkeypatch,
                                                              reference_folder):
    from fastgo.reference_players import REFERENCES_ENV

    monkeypatch.setenv(REFERENCES_ENV, str(reference_folder(tmp_path / "refs", [("nine", 4)])))
    evaluator = make(tmp_path, '[model]\nboard_size = 7\n[evaluator]\nanchors = ["random", '
                               '"ref:nine"]\n')
    assert list(evaluator.anchors) == ["random"]
    (group,) = evaluator.opponents.skipped_figures()
    assert group["anchors"] == ["ref:nine"] and group["why"] == "it plays 9x9, this run 7x7"
    nine = make(tmp_path / "9", '[model]\nboard_size = 9\n[evaluator]\nanchors = ["ref:nine"]\n')
    assert list(nine.anchors) == ["ref:nine"] and nine.anchors["ref:nine"].count == 4


def test_a_katago_anchor_is_skipped_where_katago_is_not_found(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("FASTGO_KATAGO_HOME", str(tmp_path / "no-katago"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("FASTGO_KATAGO", raising=False)
    with caplog.at_level(logging.INFO):
        evaluator = make(tmp_path, '[evaluator]\nanchors = ["random", "katago:1,t=1.5", '
                                   '"katago:2"]\n')
    assert list(evaluator.anchors) == ["random"]
    assert "anchor katago:2 skipped: KataGo's program not found" in caplog.text
    assert "anchor katago:1,t=1.5 skipped: KataGo's program not found" in caplog.text


def test_cpu_figures_carried_over_a_restart(tmp_path):
    rows = [{"player": "ckpt-0", "step": 0, "wall_s": 0, "games": 0, "eval_cpu_s": 30.0,
             "eval_wall_s": 100.0},
            {"player": "ckpt-80", "step": 80, "wall_s": 300, "games": 50, "eval_cpu_s": 100.0,
             "eval_wall_s": 400.0}]
    evaluator = make(tmp_path, "[evaluator]\ncpu_share = 0.25\n", rows)
    budget = evaluator.budget
    assert budget.share == 0.25 and budget.carried_cpu_s == 100.0
    assert budget.carried_wall_s == 400.0 and evaluator.last_step == 80
    # 100 s of CPU at 0.25 of a core needs 400 s: within the budget, nothing to wait
    assert budget.wait_s() < 1.0


def test_the_newest_checkpoint_once_enough_are_new(tmp_path):
    rows = [{"player": "ckpt-100", "step": 100, "wall_s": 0, "games": 0}]
    evaluator = make(tmp_path, "[evaluator]\nevery = 3\n", rows)
    folder = tmp_path / "run" / "checkpoints"
    for step in (50, 100, 200, 300):
        (folder / f"ckpt-{step:09d}.ckpt").write_bytes(b"")
    assert evaluator.pending() is None                      # 2 new ones, 3 needed
    assert evaluator.pending(1) == (300, str(folder / "ckpt-000000300.ckpt"))
    (folder / "ckpt-000000400.ckpt").write_bytes(b"")
    assert evaluator.pending() == (400, str(folder / "ckpt-000000400.ckpt"))


def _burn_cpu(seconds):
    import time
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_final_rating_is_outside_the_budget(tmp_path):
    """`fastgo evaluate --once` (the final rating) neither waits on the budget nor counts in it:
    the figures it records stay the run's own, while a budgeted evaluator counts what it used."""
    rows = [{"player": "ckpt-80", "step": 80, "wall_s": 300, "games": 50, "eval_cpu_s": 100.0,
             "eval_wall_s": 400.0}]
    run_dir = open_run_dir(tmp_path / "run")
    (tmp_path / "run" / "evaluations.jsonl").write_text(json.dumps(rows[0]) + "\n")
    config = loads_config("[evaluator]\ncpu_share = 0.1\n")
    log = logging.getLogger("test")
    outside = Evaluator(config, run_dir, log, enforce_budget=False, outside_budget=True)
    counted = Evaluator(config, run_dir, log)
    _burn_cpu(0.3)
    assert outside.budget.figures()["eval_cpu_s"] == 100.0
    assert outside.budget.figures()["eval_wall_s"] == 400.0
    assert counted.budget.figures()["eval_cpu_s"] >= 100.25     # the control: it does count
    assert outside.wait_for_budget() is True                    # never waits, not stopping


def test_the_newest_unrated_checkpoint(tmp_path):
    from evaluation.evaluations import unrated_newest

    run_dir = open_run_dir(tmp_path / "run")
    folder = tmp_path / "run" / "checkpoints"
    assert unrated_newest(run_dir) is None                       # no checkpoint at all
    for step in (0, 100, 200):
        (folder / f"ckpt-{step:09d}.ckpt").write_bytes(b"")
    (folder / "latest.ckpt").write_bytes(b"")                    # not a numbered one
    assert unrated_newest(run_dir) == (200, str(folder / "ckpt-000000200.ckpt"))
    table = tmp_path / "run" / "evaluations.jsonl"
    table.write_text(json.dumps({"player": "ckpt-100", "step": 100, "wall_s": 1, "games": 2})
                     + "\n")
    assert unrated_newest(run_dir) == (200, str(folder / "ckpt-000000200.ckpt"))
    with open(table, "a") as handle:
        handle.write(json.dumps({"player": "ckpt-200", "step": 200, "wall_s": 2, "games": 3})
                     + "\n")
    assert unrated_newest(run_dir) is None                       # already on the curve
    (folder / "ckpt-000000200.ckpt").unlink()                    # pruned: 100 is the newest
    assert unrated_newest(run_dir) is None
