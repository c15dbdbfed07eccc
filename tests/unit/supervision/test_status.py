"""The status line and the summary of `fastgo cluster`, and the roles of a run: the exact text
for known figures, the start order and each role's command line."""
import json

from roles.registry import role_argv, role_specs
from rundata.config import Config
from rundata.ratings_table import append_result
from rundata.rundir import open_run_dir
from rundata.statefiles import read_ratings
from supervision.status import server_rates, status_line, summary_text

RATINGS = {"latest": {"player": "ckpt-40", "elo": 212.4, "elo_low": 150.2, "elo_high": 270.9,
                      "results": ["random 9-1", "mcts:100 4-6"]},
           "ratings": {"random": [0.0, 0, 0], "mcts:100": [250.0, 200, 300],
                       "ckpt-40": [212.4, 150.2, 270.9]}}


def test_status_line_with_every_figure():
    train = {"games": 120, "step": 40, "loss": 2.31, "latest": 40}
    line = status_line(3725.9, train, 61.6, 1168.4, 0.956, RATINGS, {"selfplay-w1": 2, "serve": 1})
    assert line == ("1:02:05  games 120  moves/s 62  evals/s 1168  fill 0.96  step 40  loss 2.31  "
                    "ckpt 40  Elo 212 (ckpt-40)  restarts 3 (selfplay-w1 2, serve 1)")
    assert status_line(5, {}, 0, 0, 0, None, {}) == \
        "0:00:05  games 0  moves/s 0  evals/s 0  fill 0.00  step 0  loss -  ckpt -  Elo -"
    # the evaluator's status file: its CPU share of a core over the run, and its budget
    evaluator = {"latest": {}, "cpu_share": 0.1834, "cpu_budget": 0.2, "eval_cpu_s": 660.2}
    assert status_line(5, train, 0, 0, 0, RATINGS, {}, evaluator).endswith(
        "Elo 212 (ckpt-40)  eval cpu 0.18/0.2")
    assert "eval cpu" not in status_line(5, train, 0, 0, 0, RATINGS, {}, {"cpu_share": "x"})


SKIPPED = [{"what": "GNU Go", "anchors": ["gnugo:1", "gnugo:5", "gnugo:10"],
            "command": "apt-get install gnugo", "why": "GNU Go is not installed"},
           {"what": "KataGo", "anchors": ["katago:1"], "command": "fastgo katago fetch",
            "why": "KataGo's program not found"},
           {"what": "checkpoint", "anchors": ["old.ckpt"], "command": "",
            "why": "no such checkpoint file"}]


def test_the_status_line_and_summary_name_the_skipped_anchors_and_their_commands(tmp_path):
    evaluator = {"cpu_share": 0.1, "cpu_budget": 0.2, "skipped_anchors": SKIPPED}
    line = status_line(5, {}, 0, 0, 0, None, {}, evaluator)
    assert line.endswith("Elo -  eval cpu 0.10/0.2  skipped GNU Go x3 (apt-get install gnugo), "
                         "KataGo x1 (fastgo katago fetch), checkpoint x1")
    run_dir = open_run_dir(tmp_path / "run")
    text = summary_text(1, None, {}, {}, None, run_dir, evaluator).splitlines()
    assert text[-4:-1] == [
        "  skipped gnugo:1, gnugo:5, gnugo:10: GNU Go is not installed; "
        "`apt-get install gnugo` adds them",
        "  skipped katago:1: KataGo's program not found; `fastgo katago fetch` adds it",
        "  skipped old.ckpt: no such checkpoint file"]
    # a status file's malformed groups are left out, a control character escaped
    odd = {"skipped_anchors": [{"what": "GNU Go\x1b[2J", "anchors": ["gnugo:1"], "command": ""},
                               {"what": "x", "anchors": []}, {"what": 3, "anchors": ["a"]},
                               "text"]}
    assert status_line(5, {}, 0, 0, 0, None, {}, odd).endswith(r"skipped GNU Go\x1b[2J x1")
    assert "skipped" not in status_line(5, {}, 0, 0, 0, None, {}, {"skipped_anchors": "all"})


def test_server_rates_between_two_stats():
    before = {"positions": 1000, "batches": 20, "max_batch": 64}
    after = {"positions": 3000, "batches": 60, "max_batch": 64}
    evals, fill = server_rates(after, (before, 100.0), now=102.0)
    # 2000 positions in 2 s; 2000 / 40 batches = 50 per batch of 64
    assert evals == 1000 and fill == 50 / 64
    assert server_rates(after, None) == (0.0, 0.0) and server_rates(None, (before, 0.0)) == (0.0, 0.0)


def test_summary_names_the_latest_rating_the_anchors_and_the_evaluator_cpu(tmp_path):
    run_dir = open_run_dir(tmp_path / "run")
    (tmp_path / "run" / "ratings.json").write_text(json.dumps(RATINGS))
    text = summary_text(61, "SIGTERM", {"games": 7, "step": 3}, {}, read_ratings(run_dir.ratings),
                        run_dir, {"cpu_share": 0.19512, "cpu_budget": 0.2})
    assert text.splitlines() == [
        "fastgo cluster: stopped after 0:01:01 (SIGTERM)",
        "  self-play games 7, training steps 3, restarts 0",
        "  ckpt-40: Elo 212 (150..271); last results: random 9-1, mcts:100 4-6",
        "  anchor mcts:100: Elo 250",
        "  anchor random: Elo 0",
        "  evaluator CPU: 0.195 of a core on average (budget 0.2)",
        f"  curve {run_dir.root}/curve.png, SGFs {run_dir.sgf}, checkpoint {run_dir.latest}"]
    (tmp_path / "run" / "ratings.json").write_text("[1, 2]")           # not a table: no rating
    assert "  no evaluation yet" in summary_text(1, None, {}, {}, read_ratings(run_dir.ratings),
                                                 run_dir).splitlines()


def test_roles_in_start_order_with_their_command_lines(tmp_path):
    config, run_dir = Config(), open_run_dir(tmp_path / "run")
    local = role_specs(config.cluster, 2, True, recorder=False)
    assert [(s.name, s.kind, s.heartbeat) for s in local] == [
        ("serve", "serve", None), ("train", "train", "train"),
        ("selfplay-w0", "selfplay", "selfplay-w0"), ("selfplay-w1", "selfplay", "selfplay-w1"),
        ("evaluate", "evaluate", "evaluate")]
    ray = role_specs(config.cluster, 1, False, recorder=True)
    assert [s.name for s in ray] == ["serve", "train", "recorder", "selfplay-w0"]
    assert role_specs(config.cluster, 0, False, recorder=True)[-1].name == "train"   # no recorder
    worker = role_argv(local[3], config, "c.toml", run_dir, endpoint="tcp://h:1",
                       recorder="tcp://h:2")
    assert worker == ["selfplay", "--config", "c.toml", "--run-dir", run_dir.root, "--server",
                      "tcp://h:1", "--worker-id", "1", "--quiet", "--recorder", "tcp://h:2"]
    serve = role_argv(local[0], config, "c.toml", run_dir)
    assert serve == ["serve", "--config", "c.toml", "--checkpoint",
                     f"{config.trainer.publish_slot}={run_dir.latest}", "--shards", run_dir.shards,
                     "--log-file", run_dir.log("serve"), "--quiet"]


HUGE = 10 ** 400                     # valid JSON; float() of it raises OverflowError


def test_numbers_too_large_for_a_float_in_ratings_or_the_evaluators_status_are_shown_as_dashes(
        tmp_path):
    """A resumed run whose ratings.json holds "elo": 10**400 and whose stale evaluator status
    holds such a cpu_share: the status line and the summary print, they never raise."""
    run_dir = open_run_dir(tmp_path / "run")
    (tmp_path / "run" / "ratings.json").write_text(json.dumps(
        {"latest": {"player": "ckpt-40", "elo": HUGE, "elo_low": -HUGE, "elo_high": 1e308 * 10,
                    "results": ["random 9-1"]},
         "ratings": {"random": [0, 0, 0], "mcts:100": [HUGE, 0, 1]}}))
    ratings = read_ratings(run_dir.ratings)
    evaluator = {"cpu_share": HUGE, "cpu_budget": 0.2}
    line = status_line(5, {"loss": HUGE}, 0, 0, 0, ratings, {}, evaluator)
    assert line.endswith("Elo - (ckpt-40)") and "eval cpu" not in line
    text = summary_text(61, None, {}, {}, ratings, run_dir, evaluator)
    assert "  ckpt-40: Elo - (-..-); last results: random 9-1" in text.splitlines()
    assert "  anchor mcts:100: Elo -" in text.splitlines() and "evaluator CPU" not in text
    # the same values as Python objects, as a caller may hand them, are refused alike
    assert status_line(5, {}, 0, 0, 0, {"latest": {"player": "p", "elo": HUGE}}, {},
                       {"cpu_share": 0.1, "cpu_budget": HUGE}).endswith("Elo - (p)")


def test_a_latest_player_that_is_a_list_does_not_stop_current_ratings(tmp_path):
    from supervision.status import current_ratings

    run_dir = open_run_dir(tmp_path / "run")
    append_result(run_dir.ratings_table, "ckpt-1", "random", 6, 2)       # the table rates both
    hostile = {"latest": {"player": ["ckpt-1"], "elo": 1}, "ratings": {"ckpt-1": [0, 0, 0]}}
    got = current_ratings(hostile, run_dir)
    assert got["latest"] == hostile["latest"] and got["ratings"]["ckpt-1"][0] > 0
    (tmp_path / "run" / "ratings.json").write_text(json.dumps(hostile))
    assert read_ratings(run_dir.ratings)["latest"] == {}
