"""The supervisor's final rating (supervision.local_launcher.LocalCluster.final_evaluation), with a
stand-in for the evaluator's process: what the summary says when the rating finishes, when its
time runs out after the first rating was written, and when it runs out before."""
import json

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import loads_config
from rundata.rundir import open_run_dir
from supervision.local_launcher import LocalCluster

CONFIG = """
[model]
board_size = 5
blocks = 1
channels = 8
[cluster]
evaluate = true
[evaluator]
final_rating_s = 0.3
"""


class Evaluator:
    """A stand-in child: `start` writes the first rating when `rates`; `wait` says the process
    still runs (None) until `exits` is set."""

    def __init__(self, run_dir, rates, exits=None):
        self.run_dir, self.rates, self.exits = run_dir, rates, exits
        self.started, self.stopped = [], False

    def start(self, argv):
        self.started.append(argv)
        if self.rates:
            latest = {"player": "ckpt-10", "elo": 812.4, "elo_low": 640.0, "elo_high": 990.6}
            with open(self.run_dir.ratings, "w") as f:
                json.dump({"latest": latest, "ratings": {}}, f)

    def wait(self, timeout_s):
        return self.exits

    def stop(self, timeout_s):
        self.stopped = True

    def poll(self):
        return self.exits


def cluster_with(tmp_path, rates, exits=None):
    config = loads_config(CONFIG)
    run_dir = open_run_dir(tmp_path / "run")
    save_checkpoint(run_dir.checkpoint(10), build_model(config.model, seed=1), step=10)
    cluster = LocalCluster(config, "c.toml", run_dir, workers=0, evaluate=True,
                           log=lambda line: None)
    child = Evaluator(run_dir, rates, exits)
    cluster.evaluator.child = child
    return cluster, child


def test_a_rating_cut_after_its_first_rating_still_ends_the_curve(tmp_path):
    cluster, child = cluster_with(tmp_path, rates=True)
    assert cluster.final_evaluation(lambda: False) == "ckpt-10"
    assert child.stopped and child.started[0][-1] == "--once"
    assert cluster.final_note == ("final rating: ckpt-10 Elo 812 (640..991), its refining "
                                  "stopped at its 0.3 s")


def test_a_rating_cut_before_its_first_rating_leaves_the_curve_before_it(tmp_path):
    cluster, child = cluster_with(tmp_path, rates=False)
    assert cluster.final_evaluation(lambda: True) is None
    assert child.stopped
    assert cluster.final_note == "final rating of ckpt-10 stopped at a signal; the curve ends before it"


def test_a_finished_rating_says_how_long_it_took(tmp_path):
    cluster, child = cluster_with(tmp_path, rates=True, exits=0)
    assert cluster.final_evaluation(lambda: False) == "ckpt-10"
    assert not child.stopped
    assert cluster.final_note.startswith("final rating: ckpt-10 Elo 812 (640..991) in ")
