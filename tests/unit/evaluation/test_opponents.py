"""Who the evaluator's checkpoints play (evaluation.opponents), without playing: earlier
checkpoints far ones first, loaded as reached, one that cannot be loaded skipped with a line;
an anchor that failed is not offered again; the anchors' order follows evaluation.pairings."""
import logging
from types import SimpleNamespace

from evaluation.opponents import Opponents
from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import loads_config
from rundata.rundir import open_run_dir

CONFIG = """
[model]
board_size = 5
blocks = 1
channels = 8
[evaluator]
anchors = ["random", "mcts:50"]
visits = 4
"""


def job(step, seed=1):
    return SimpleNamespace(name=f"ckpt-{step}", step=step, seed=seed, anchors={})


def rated(tmp_path, config, steps, broken=()):
    """Rows of evaluations.jsonl for checkpoints at `steps`, each saved (those in `broken` as
    bytes that are no checkpoint)."""
    run_dir = open_run_dir(tmp_path / "run")
    rows = []
    for step in steps:
        path = run_dir.checkpoint(step)
        if step in broken:
            with open(path, "wb") as handle:
                handle.write(b"not a checkpoint")
        else:
            save_checkpoint(path, build_model(config.model, seed=step), step=step)
        rows.append({"player": f"ckpt-{step}", "step": step, "path": str(path)})
    return rows


def test_earlier_checkpoints_far_ones_first_and_an_unloadable_one_skipped(tmp_path, caplog):
    config = loads_config(CONFIG)
    # for step 800: the previous (700), then the nearest to 1/2 and 1/4 of 800 (400, 200);
    # 200 cannot be read, 100 is none of them
    rows = rated(tmp_path, config, [100, 200, 400, 700], broken=[200])
    opponents = Opponents(config, logging.getLogger("test"))
    with caplog.at_level(logging.WARNING):
        sides = list(opponents.checkpoint_sides(job(800), rows, predict=None, far_first=True))
    assert [label for label, _ in sides] == ["ckpt-400", "ckpt-700"]
    assert all(side.visits == 4 for _, side in sides)
    assert "ckpt-800: earlier checkpoint ckpt-200 unusable" in caplog.text
    # the previous one first without far_first
    sides = list(opponents.checkpoint_sides(job(800), rows, predict=None))
    assert [label for label, _ in sides] == ["ckpt-700", "ckpt-400"]
    # a pruned copy is not offered at all (the nearest one there instead); the previous one is
    # offered even so, and skipped when it cannot be loaded
    (tmp_path / "run" / "checkpoints" / "ckpt-000000400.ckpt").unlink()
    (tmp_path / "run" / "checkpoints" / "ckpt-000000700.ckpt").unlink()
    (tmp_path / "run" / "checkpoints" / "ckpt-000000200.ckpt").unlink()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        sides = list(opponents.checkpoint_sides(job(800), rows, predict=None, far_first=True))
    assert [label for label, _ in sides] == ["ckpt-100"]
    assert "earlier checkpoint ckpt-700 unusable" in caplog.text
    assert "ckpt-400" not in caplog.text and "ckpt-200" not in caplog.text


def test_a_failed_anchor_is_not_offered_again(tmp_path):
    config = loads_config(CONFIG)
    opponents = Opponents(config, logging.getLogger("test"))
    assert list(opponents.anchors) == ["random", "mcts:50"]
    no_ratings = ({}, [], lambda a, b: None)
    first = job(800)
    label, side = next(opponents.anchor_sides(first, lambda: no_ratings, limit=1))
    assert label == "random" and side.name == "random"
    opponents.failed("random", RuntimeError("engine\nwent away"))
    assert opponents.unusable == {"random": "cannot start: engine went away"}
    later = job(900)
    assert [a for a, _ in opponents.anchor_sides(later, lambda: no_ratings)] == ["mcts:50"]


def test_at_equal_time_each_network_speed_is_measured_once(tmp_path, monkeypatch):
    """evaluator.move_seconds: an earlier checkpoint plays the visits its measured speed fits
    in the seconds (play.equal_time.pace_sides, the arena's pacing); checkpoints of one network
    shape share the speed measured for the first, not measured again."""
    import play.equal_time

    config = loads_config(CONFIG + "move_seconds = 0.5\n")
    rows = rated(tmp_path, config, [100, 200, 400, 700])
    figures = []

    def fake(evaluator, settings, size, komi):
        figures.append(size)
        return 1000.0

    monkeypatch.setattr(play.equal_time, "one_thread_rate", fake)
    opponents = Opponents(config, logging.getLogger("test"))
    sides = list(opponents.checkpoint_sides(job(800), rows, predict=None))
    assert len(sides) == 3 and figures == [5]
    assert all(side.visits == play.equal_time.visits_for(0.5, 1000.0) == 500
               and side.rate == 1000.0 for _, side in sides)
    assert list(opponents.rates.values()) == [1000.0]
